// A tensor network as the search and the compiler see it: nodes with labelled modes, the size
// of every label, and the labels the result keeps. No data: verif/tensor.hpp holds values.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace fetta::verif {

struct NetworkNode {
  std::string name;                 // "X", "G1", "dY", ... (for messages and reports)
  std::vector<std::string> labels;  // one per mode, in storage order
};

struct TensorNetwork {
  std::vector<NetworkNode> nodes;
  std::vector<std::string> output_labels;  // modes of the result, in order
  std::map<std::string, int64_t> dims;     // size of every label

  // einsum-like text, e.g. "bi,ijr,r->bj" (labels of one character each are joined; longer
  // labels are separated by spaces). For messages and reports.
  std::string to_string() const;
};

// An ill-formed network (see validate()).
class NetworkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws NetworkError unless: node names are distinct; the labels of a node are distinct; a label
// appears in at most two nodes; every node label has a size >= 1 in dims; the output labels are
// distinct and each is a label of some node.
void validate(const TensorNetwork& net);

}  // namespace fetta::verif
