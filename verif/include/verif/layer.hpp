// Tensorized linear layers and the tensor networks of their training phases
// (ARCHITECTURE.md §1; docs/golden_model.md describes the networks and the conventions).
//
// Label convention (multi-character labels): batch "b"; input modes "n1".."nt"; output modes
// "m1".."ms"; rank edges "r..." (below). Node names: "X" [b, n1..nt], "dY" [b, m1..ms], cores
// "G1".."Gd"; HT transfer tensors "T<a>_<b>" (covering leaves a..b); BT "U_k" and "G_k_i".
//
// Ranks per format (`ranks` in LayerSpec / the YAML), d = number of cores:
//   tt : d = s + t, ranks = [R_0 .. R_d] (d+1 entries) with R_0 = R_d = 1. Core i (1-based) is
//        G_i[r{i-1}, m_i (i <= s) or n_{i-s} (i > s), r{i}]; the size-1 end edges r0 and rd are
//        omitted, so G1 = [m1, r1] and Gd = [r{d-1}, nt].
//   ttm: d = s = t, ranks = [R_0 .. R_d] with R_0 = R_d = 1; G_i[r{i-1}, m_i, n_i, r{i}], end
//        edges omitted as for tt.
//   tr : like tt (same cores, d = s + t) with ranks = [R_0 .. R_d] (d+1 entries), R_0 = R_d (any
//        size >= 1): the ring edge between Gd and G1 is "r0", so Gd = [r{d-1}, nt, r0] and
//        G1 = [r0, m1, r1]. Rank labels r0 .. r{d-1}.
//   ht : d = s = t >= 2 leaves G_i[m_i, n_i, r{i}], ranks = [R_1 .. R_d] (d entries, the leaf
//        edges); a balanced binary tree of transfer tensors over the leaves (a node covering leaves
//        a..b splits them into a..c and c+1..b with c = a + ceil((b-a+1)/2) - 1); the transfer
//        tensor "T<a>_<b>" has labels [left edge, right edge, "r<a>_<b>"] where "r<a>_<b>" has size
//        transfer_rank; the root "T1_<d>" has rank 1 on top, so its upper edge is omitted:
//        [left edge, right edge]. transfer_rank is required when d > 2.
//   bt : d = s = t; `terms` = K block terms; ranks = [R_1 .. R_d] (d entries, the same for every
//        term); term k has U_k[r1 .. rd] and G_k_i[m_i, n_i, r{i}]; W is the sum of the terms.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "verif/network.hpp"
#include "verif/tensor.hpp"

namespace fetta::verif {

enum class Format { tt, ttm, tr, ht, bt };
enum class Phase { fp, bp, wg };

std::string to_string(Format f);  // "tt", "ttm", ...
std::string to_string(Phase p);   // "fp", "bp", "wg"

// An invalid layer description. The message names the file, the line, the field and the
// allowed values.
class LayerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LayerSpec {
  std::string name;
  std::string source;  // file, for messages
  Format format = Format::tt;
  int64_t batch = 1;               // `batch` in the YAML (B, the rows of X)
  std::vector<int64_t> out_modes;  // M_1..M_s
  std::vector<int64_t> in_modes;   // N_1..N_t
  std::vector<int64_t> ranks;      // see the header comment, per format
  int64_t transfer_rank = 0;       // HT only (internal edges of the tree)
  int64_t terms = 1;               // BT only
};

// YAML keys: name (string, optional: default the file stem), format (tt|ttm|tr|ht|bt), batch,
// out_modes, in_modes, ranks (lists of integers), transfer_rank (ht only), terms (bt only).
LayerSpec load_layer(const std::string& path);
// The file's text, for a reader that keeps what it parsed (a program embeds it); LayerError when it
// cannot be opened. load_layer is parse_layer(read_layer_text(path), path).
std::string read_layer_text(const std::string& path);
LayerSpec parse_layer(const std::string& yaml_text, const std::string& source = "<string>");
// The same checks on a spec built in code (messages name spec.source and the field, no line).
void validate_layer(const LayerSpec& spec);

struct PhaseProblem {
  std::string result;                      // "Y", "dX", "dG1", "dT1_2", "dU_1", ...
  std::vector<std::string> result_labels;  // labels of the result, in order
  std::vector<TensorNetwork> terms;        // result = sum over terms
};

// FP: {Y = X W^T}; BP: {dX = dY W}; WG: one problem per core (in layer_cores order): the network
// without that core, with X and dY, whose output labels are the core's labels.
std::vector<PhaseProblem> phase_problems(const LayerSpec& spec, Phase phase);

// --- facts about a layer -------------------------------------------------------------------------

int64_t num_cores(const LayerSpec& spec);  // d: leaf/factor cores per term (tt/tr: s+t, else s)
int64_t out_size(const LayerSpec& spec);   // M = prod M_i
int64_t in_size(const LayerSpec& spec);    // N = prod N_i
std::vector<std::string> x_labels(const LayerSpec& spec);   // [b, n1..nt]
std::vector<std::string> y_labels(const LayerSpec& spec);   // [b, m1..ms]
std::vector<std::string> w_labels(const LayerSpec& spec);   // [m1..ms, n1..nt]
std::map<std::string, int64_t> layer_dims(const LayerSpec& spec);  // every label's size
// Every core (all terms), in a fixed order: tt/ttm/tr G1..Gd; ht G1..Gd then the transfer tensors
// bottom-up (post-order); bt U_1, G_1_1..G_1_d, U_2, ...
std::vector<NetworkNode> layer_cores(const LayerSpec& spec);
// The tensors a run of the layer takes as inputs, by name, with their shapes: every core (labels as
// in layer_cores), X [b, n1..nt] and dY [b, m1..ms] (what random_cores, random_input and
// random_output_grad make, and what a program's input tensors name).
std::map<std::string, std::vector<int64_t>> layer_input_shapes(const LayerSpec& spec);
// One network per term: its cores, output labels w_labels (the dense W[m.., n..]).
std::vector<TensorNetwork> weight_networks(const LayerSpec& spec);

// --- values (fp64 reference) ---------------------------------------------------------------------

using TensorMap = std::map<std::string, Tensor<double>>;

// Every core, uniform in [-1, 1) (each core drawn from std::mt19937_64 seeded with a value
// derived from `seed` and the core's position), labels as in layer_cores.
TensorMap random_cores(const LayerSpec& spec, uint64_t seed);
Tensor<double> random_input(const LayerSpec& spec, uint64_t seed);        // X [b, n1..nt]
Tensor<double> random_output_grad(const LayerSpec& spec, uint64_t seed);  // dY [b, m1..ms]

// The sum of evaluate(term) over the terms, with labels result_labels.
Tensor<double> evaluate(const PhaseProblem& problem, const TensorMap& tensors);
// W with labels [m1..ms, n1..nt] (sum over terms).
Tensor<double> reconstruct_modes(const LayerSpec& spec, const TensorMap& cores);
// W as a matrix: labels ["m", "n"], shape [M, N]; m = row-major index of (m1..ms), n likewise,
// matching X reshaped to [B, N] and Y to [B, M].
Tensor<double> reconstruct_dense(const LayerSpec& spec, const TensorMap& cores);

}  // namespace fetta::verif
