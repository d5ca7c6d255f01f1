// Contractions by labels with einsum semantics, in three flavours:
//   (a) fp64 reference (any number of operands),
//   (b) order-exact bf16 x bf16 -> binary32 (bit patterns), the accumulation order stated by the
//       caller, for bit-exact comparison with the RTL,
//   (c) integer: int8 -> int32 and int16 -> int48, wrapping (exact, order-independent).
//
// Label rules (all flavours): the labels of one operand are distinct (a Tensor guarantees it);
// a label may appear in at most two operands (three is an error); a label present in two
// operands must have the same size in both; every output label must be a label of some operand
// and appear once in the output. Every operand label that is not an output label is summed
// (whether it is shared or belongs to one operand only). A label shared by two operands and kept
// in the output is a batch-like (Hadamard) mode. Two operands sharing no label give an outer
// product.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "verif/network.hpp"
#include "verif/tensor.hpp"

namespace fetta::verif {

// Invalid contraction (label rules above, size mismatch, bad accumulation order, ...).
class ContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------------------------------------------
// (a) fp64 reference

Tensor<double> contract(const Tensor<double>& a, const Tensor<double>& b,
                        const std::vector<std::string>& out_labels);
// n-ary: contracted pairwise. The pair order is greedy (repeatedly the pair sharing a label whose
// result is smallest; an outer product only when no pair shares a label); this changes only the
// fp64 rounding, not the result. One operand: sums its non-output labels and permutes.
Tensor<double> contract(const std::vector<Tensor<double>>& operands,
                        const std::vector<std::string>& out_labels);

// Evaluates a network with the fp64 reference. `tensors` maps node names to tensors whose
// labels are the node's labels (in any order) with the sizes of net.dims. The result has the
// labels net.output_labels in that order.
Tensor<double> evaluate(const TensorNetwork& net, const std::map<std::string, Tensor<double>>& tensors);

// ------------------------------------------------------------------------------------------------
// (b) order-exact bf16 -> binary32

// For one output element the products p_0 .. p_{n-1} (p_k = bf16_mul(a, b), exact binary32) are
// listed in row-major order of the *summed index space*: the summed labels in the order of
// AccumulationOrder::sum_labels() (default: the summed labels of `a` in a's order, then those of
// `b` only, in b's order; the first label varies slowest).

// An expression over the product list, built bottom-up (children before parents): the explicit
// form of a hardware reduction. Node kinds:
//   product(k)       the product p_k itself (binary32 bits);
//   chain(begin,end) ((+0 + p_begin) + p_begin+1) + ... + p_end-1, sequentially (a systolic
//                    column / a MAC register starting from +0); an empty chain is +0;
//   zero()           +0;
//   add(l, r)        fp32_add(value(l), value(r)) (an adder of the reduction network or the
//                    accumulator; the left operand is the first operand of fp32_add).
// A valid tree covers every product index exactly once and uses every node except the root
// exactly once as a child.
struct SumNode {
  enum class Kind { product, chain, zero, add };
  Kind kind = Kind::zero;
  int64_t first = 0;  // product: k; chain: begin
  int64_t last = 0;   // chain: end (exclusive)
  int left = -1;      // add
  int right = -1;     // add
};

struct SumTree {
  std::vector<SumNode> nodes;
  int root = -1;  // index into nodes; set by the builders (the last node added by default)

  int product(int64_t k);
  int chain(int64_t begin, int64_t end);
  int zero();
  int add(int left, int right);

  // ((+0 + p0) + p1) + ... : the same as AccumulationOrder::sequential().
  static SumTree sequential(int64_t n);
  // Pairwise balanced tree over the raw products (left half gets the extra element).
  static SumTree balanced(int64_t n);
  // Chains of `chunk` products (the last one shorter), then a balanced tree over the chain
  // results: CE columns followed by a reduction network.
  static SumTree chains_then_balanced(int64_t n, int64_t chunk);
  // Chains of `chunk`, accumulated sequentially into +0: the same as AccumulationOrder::tiled.
  static SumTree chains_then_sequential(int64_t n, int64_t chunk);

  // Throws ContractError unless the tree is valid for a product list of length n.
  void validate(int64_t n) const;
  // Evaluates the tree on a product list (validate() first; evaluate() checks indices only).
  uint32_t evaluate(std::span<const uint32_t> products) const;
  // E.g. "add(add(chain[0,4), chain[4,8)), p8)".
  std::string to_string() const;
};

class AccumulationOrder {
 public:
  enum class Kind { sequential, tiled, tree, callback };
  // Gets the product list of one output element and its index (in output label order); returns
  // the binary32 result.
  using Callback = std::function<uint32_t(std::span<const uint32_t> products, std::span<const int64_t> out_index)>;
  // Builds a tree for a product list of length n (called once per contraction).
  using TreeBuilder = std::function<SumTree(int64_t n)>;

  // acc = +0; acc = fp32_add(acc, p_k) for k = 0..n-1 (output-stationary PE, or a psum that
  // flows through the whole reduction in order).
  static AccumulationOrder sequential();
  // The summed range split into chunks of `chunk` (the last may be shorter); each chunk summed
  // sequentially from +0 (a systolic column of `chunk` rows); chunk results added sequentially
  // into an accumulator that starts at +0.
  static AccumulationOrder tiled(int64_t chunk);
  // A fixed tree; its product list length must equal the summed size.
  static AccumulationOrder tree(SumTree tree);
  // A tree built for the summed size.
  static AccumulationOrder tree(TreeBuilder builder);
  // Anything else.
  static AccumulationOrder callback(Callback cb);

  // States the linearization of the summed index space (a permutation of the summed labels,
  // first = slowest). Empty = the default described above.
  AccumulationOrder& with_sum_labels(std::vector<std::string> labels);
  const std::vector<std::string>& sum_labels() const { return sum_labels_; }

  Kind kind() const { return kind_; }
  int64_t chunk() const { return chunk_; }

  // Reduces one product list (the tree is built/validated for its length on each call).
  uint32_t reduce(std::span<const uint32_t> products, std::span<const int64_t> out_index = {}) const;
  std::string to_string() const;

 private:
  friend Tensor<uint32_t> contract_bf16(const Tensor<uint16_t>&, const Tensor<uint16_t>&,
                                        const std::vector<std::string>&, const AccumulationOrder&);
  Kind kind_ = Kind::sequential;
  int64_t chunk_ = 0;
  SumTree tree_;
  TreeBuilder builder_;
  Callback callback_;
  std::vector<std::string> sum_labels_;
};

// Binary contraction of bf16 operands into binary32 results, each output element reduced in the
// stated order. Throws ContractError (label rules, or a tree that does not fit).
Tensor<uint32_t> contract_bf16(const Tensor<uint16_t>& a, const Tensor<uint16_t>& b,
                               const std::vector<std::string>& out_labels, const AccumulationOrder& order);

// The summed labels and sizes of a binary contraction (in the order given, or the default).
struct SummedSpace {
  std::vector<std::string> labels;
  std::vector<int64_t> shape;
  int64_t size = 1;
};
SummedSpace summed_space(const std::vector<std::string>& a_labels, const std::vector<int64_t>& a_shape,
                         const std::vector<std::string>& b_labels, const std::vector<int64_t>& b_shape,
                         const std::vector<std::string>& out_labels,
                         const std::vector<std::string>& sum_labels = {});

// The product list p_0..p_{n-1} of one output element (index in out_labels order).
std::vector<uint32_t> bf16_products(const Tensor<uint16_t>& a, const Tensor<uint16_t>& b,
                                    const std::vector<std::string>& out_labels,
                                    std::span<const int64_t> out_index,
                                    const std::vector<std::string>& sum_labels = {});

// ------------------------------------------------------------------------------------------------
// (c) integer

// int8 x int8 products accumulated into int32 modulo 2^32 (int8_mac).
Tensor<int32_t> contract_int8(const Tensor<int8_t>& a, const Tensor<int8_t>& b,
                              const std::vector<std::string>& out_labels);
// int16 x int16 products accumulated into 48 bits (int16_mac48); values sign-extended.
Tensor<int64_t> contract_int16(const Tensor<int16_t>& a, const Tensor<int16_t>& b,
                               const std::vector<std::string>& out_labels);

}  // namespace fetta::verif
