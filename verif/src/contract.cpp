#include "verif/contract.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <set>

#include "verif/numerics.hpp"

namespace fetta::verif {
namespace {

std::string labels_text(const std::vector<std::string>& labels) { return fmt::format("[{}]", fmt::join(labels, ", ")); }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t index_of(const std::vector<std::string>& v, const std::string& x) {
  const auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : it - v.begin();
}

// The strides and offsets of one binary contraction.
struct Plan {
  std::vector<std::string> out_labels;
  std::vector<int64_t> out_shape;
  std::vector<int64_t> a_out_stride;
  std::vector<int64_t> b_out_stride;
  int64_t a_offset = 0;
  int64_t b_offset = 0;
  SummedSpace sum;
  std::vector<int64_t> a_sum_off;  // per position of the summed space
  std::vector<int64_t> b_sum_off;
};

template <class TA, class TB>
Plan make_plan(const Tensor<TA>& a, const Tensor<TB>& b, const std::vector<std::string>& out_labels,
               const std::vector<std::string>& sum_labels) {
  Plan p;
  p.sum = summed_space(a.labels(), a.shape(), b.labels(), b.shape(), out_labels, sum_labels);
  p.out_labels = out_labels;
  p.a_offset = a.offset();
  p.b_offset = b.offset();
  auto stride_of = [](const auto& t, const std::string& l) -> int64_t {
    const int64_t i = index_of(t.labels(), l);
    return i < 0 ? 0 : t.strides()[static_cast<size_t>(i)];
  };
  for (const auto& l : out_labels) {
    p.out_shape.push_back(a.has_label(l) ? a.dim(l) : b.dim(l));
    p.a_out_stride.push_back(stride_of(a, l));
    p.b_out_stride.push_back(stride_of(b, l));
  }
  // Offsets of every point of the summed space, row-major in sum.labels.
  const size_t r = p.sum.labels.size();
  std::vector<int64_t> sa(r), sb(r);
  for (size_t i = 0; i < r; ++i) {
    sa[i] = stride_of(a, p.sum.labels[i]);
    sb[i] = stride_of(b, p.sum.labels[i]);
  }
  p.a_sum_off.reserve(static_cast<size_t>(p.sum.size));
  p.b_sum_off.reserve(static_cast<size_t>(p.sum.size));
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0;
  int64_t ob = 0;
  for (int64_t k = 0; k < p.sum.size; ++k) {
    p.a_sum_off.push_back(oa);
    p.b_sum_off.push_back(ob);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < p.sum.shape[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= (p.sum.shape[d] - 1) * sa[d];
      ob -= (p.sum.shape[d] - 1) * sb[d];
      idx[d] = 0;
    }
  }
  return p;
}

// Runs body(a_base, b_base, out_index) for every output element in C order.
template <class R, class F>
Tensor<R> run_plan(const Plan& p, F&& body) {
  Tensor<R> out(p.out_labels, p.out_shape);
  R* dst = out.storage_data();
  const int64_t n = out.numel();
  const size_t r = p.out_shape.size();
  std::vector<int64_t> idx(r, 0);
  int64_t pa = p.a_offset;
  int64_t pb = p.b_offset;
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = body(pa, pb, std::as_const(idx));
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < p.out_shape[d]) {
        pa += p.a_out_stride[d];
        pb += p.b_out_stride[d];
        break;
      }
      pa -= (p.out_shape[d] - 1) * p.a_out_stride[d];
      pb -= (p.out_shape[d] - 1) * p.b_out_stride[d];
      idx[d] = 0;
    }
  }
  return out;
}

// Checks the n-ary label rules; returns the size of every label.
std::map<std::string, int64_t> check_operands(const std::vector<std::vector<std::string>>& labels,
                                              const std::vector<std::vector<int64_t>>& shapes,
                                              const std::vector<std::string>& out_labels) {
  std::map<std::string, int64_t> size;
  std::map<std::string, std::vector<size_t>> where;
  for (size_t o = 0; o < labels.size(); ++o) {
    for (size_t i = 0; i < labels[o].size(); ++i) {
      const std::string& l = labels[o][i];
      const int64_t s = shapes[o][i];
      auto& w = where[l];
      w.push_back(o);
      if (w.size() > 2)
        throw ContractError(fmt::format("contract: label '{}' appears in operands {} (at most two allowed)", l,
                                        fmt::join(w, ", ")));
      const auto [it, inserted] = size.emplace(l, s);
      if (!inserted && it->second != s)
        throw ContractError(fmt::format("contract: label '{}' has size {} in operand {} but {} in operand {}", l,
                                        it->second, w.front(), s, o));
    }
  }
  for (size_t i = 0; i < out_labels.size(); ++i) {
    if (!size.contains(out_labels[i]))
      throw ContractError(fmt::format("contract: output label '{}' is in no operand", out_labels[i]));
    for (size_t j = 0; j < i; ++j)
      if (out_labels[i] == out_labels[j])
        throw ContractError(fmt::format("contract: output label '{}' repeated in {}", out_labels[i],
                                        labels_text(out_labels)));
  }
  return size;
}

}  // namespace

// ------------------------------------------------------------------------------------------------

SummedSpace summed_space(const std::vector<std::string>& a_labels, const std::vector<int64_t>& a_shape,
                         const std::vector<std::string>& b_labels, const std::vector<int64_t>& b_shape,
                         const std::vector<std::string>& out_labels, const std::vector<std::string>& sum_labels) {
  const auto size = check_operands({a_labels, b_labels}, {a_shape, b_shape}, out_labels);
  std::vector<std::string> summed;
  for (const auto& l : a_labels)
    if (!contains(out_labels, l)) summed.push_back(l);
  for (const auto& l : b_labels)
    if (!contains(out_labels, l) && !contains(a_labels, l)) summed.push_back(l);
  SummedSpace s;
  if (sum_labels.empty()) {
    s.labels = summed;
  } else {
    std::vector<std::string> x = sum_labels;
    std::vector<std::string> y = summed;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    if (x != y || std::adjacent_find(x.begin(), x.end()) != x.end())
      throw ContractError(fmt::format("contract: sum labels {} are not a permutation of the summed labels {}",
                                      labels_text(sum_labels), labels_text(summed)));
    s.labels = sum_labels;
  }
  for (const auto& l : s.labels) {
    s.shape.push_back(size.at(l));
    s.size *= size.at(l);
  }
  return s;
}

// --- (a) fp64 ---------------------------------------------------------------------------------------

Tensor<double> contract(const Tensor<double>& a, const Tensor<double>& b, const std::vector<std::string>& out_labels) {
  const Plan p = make_plan(a, b, out_labels, {});
  const double* A = a.storage_data();
  const double* B = b.storage_data();
  const int64_t* as = p.a_sum_off.data();
  const int64_t* bs = p.b_sum_off.data();
  const int64_t n = p.sum.size;
  return run_plan<double>(p, [&](int64_t pa, int64_t pb, const std::vector<int64_t>&) {
    double acc = 0.0;
    for (int64_t k = 0; k < n; ++k) acc += A[pa + as[k]] * B[pb + bs[k]];
    return acc;
  });
}

Tensor<double> contract(const std::vector<Tensor<double>>& operands, const std::vector<std::string>& out_labels) {
  if (operands.empty()) throw ContractError("contract: no operands");
  {
    std::vector<std::vector<std::string>> labels;
    std::vector<std::vector<int64_t>> shapes;
    for (const auto& t : operands) {
      labels.push_back(t.labels());
      shapes.push_back(t.shape());
    }
    check_operands(labels, shapes, out_labels);
  }
  std::vector<Tensor<double>> ops = operands;
  // Labels of the pair (i, j) that must survive their contraction.
  auto kept = [&](size_t i, size_t j) {
    std::vector<std::string> keep;
    auto needed = [&](const std::string& l) {
      if (contains(out_labels, l)) return true;
      for (size_t o = 0; o < ops.size(); ++o)
        if (o != i && o != j && ops[o].has_label(l)) return true;
      return false;
    };
    for (const auto& l : ops[i].labels())
      if (needed(l)) keep.push_back(l);
    for (const auto& l : ops[j].labels())
      if (needed(l) && !contains(keep, l)) keep.push_back(l);
    return keep;
  };
  while (ops.size() > 1) {
    size_t bi = 0;
    size_t bj = 1;
    bool best_shares = false;
    double best_size = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = i + 1; j < ops.size(); ++j) {
        bool shares = false;
        for (const auto& l : ops[i].labels()) shares = shares || ops[j].has_label(l);
        double result_size = 1.0;
        for (const auto& l : kept(i, j))
          result_size *= static_cast<double>(ops[i].has_label(l) ? ops[i].dim(l) : ops[j].dim(l));
        if ((shares && !best_shares) || (shares == best_shares && result_size < best_size)) {
          bi = i;
          bj = j;
          best_shares = shares;
          best_size = result_size;
        }
      }
    }
    Tensor<double> r = contract(ops[bi], ops[bj], kept(bi, bj));
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(bj));
    ops[bi] = std::move(r);
  }
  // Sum the remaining non-output labels and order as requested.
  const Tensor<double> one({}, {}, {1.0});
  return contract(ops.front(), one, out_labels);
}

Tensor<double> evaluate(const TensorNetwork& net, const std::map<std::string, Tensor<double>>& tensors) {
  validate(net);
  std::vector<Tensor<double>> ops;
  for (const auto& node : net.nodes) {
    const auto it = tensors.find(node.name);
    if (it == tensors.end()) throw ContractError(fmt::format("evaluate: no tensor for node '{}'", node.name));
    const Tensor<double>& t = it->second;
    if (static_cast<size_t>(t.rank()) != node.labels.size())
      throw ContractError(fmt::format("evaluate: tensor '{}' has labels {}, the node has {}", node.name,
                                      labels_text(t.labels()), labels_text(node.labels)));
    for (const auto& l : node.labels) {
      if (!t.has_label(l))
        throw ContractError(fmt::format("evaluate: tensor '{}' has labels {}, the node has {}", node.name,
                                        labels_text(t.labels()), labels_text(node.labels)));
      if (t.dim(l) != net.dims.at(l))
        throw ContractError(fmt::format("evaluate: tensor '{}' has size {} for '{}', the network says {}",
                                        node.name, t.dim(l), l, net.dims.at(l)));
    }
    ops.push_back(t.permute(node.labels));
  }
  return contract(ops, net.output_labels);
}

// --- (b) order-exact bf16 ---------------------------------------------------------------------------

int SumTree::product(int64_t k) {
  nodes.push_back(SumNode{SumNode::Kind::product, k, k + 1, -1, -1});
  return root = static_cast<int>(nodes.size()) - 1;
}
int SumTree::chain(int64_t begin, int64_t end) {
  nodes.push_back(SumNode{SumNode::Kind::chain, begin, end, -1, -1});
  return root = static_cast<int>(nodes.size()) - 1;
}
int SumTree::zero() {
  nodes.push_back(SumNode{SumNode::Kind::zero, 0, 0, -1, -1});
  return root = static_cast<int>(nodes.size()) - 1;
}
int SumTree::add(int left, int right) {
  nodes.push_back(SumNode{SumNode::Kind::add, 0, 0, left, right});
  return root = static_cast<int>(nodes.size()) - 1;
}

SumTree SumTree::sequential(int64_t n) {
  SumTree t;
  t.chain(0, n);
  return t;
}

namespace {
int balanced_over(SumTree& t, const std::vector<int>& leaves, size_t lo, size_t hi) {
  if (hi - lo == 1) return leaves[lo];
  const size_t mid = lo + (hi - lo + 1) / 2;
  const int l = balanced_over(t, leaves, lo, mid);
  const int r = balanced_over(t, leaves, mid, hi);
  return t.add(l, r);
}
}  // namespace

SumTree SumTree::balanced(int64_t n) {
  SumTree t;
  if (n == 0) {
    t.zero();
    return t;
  }
  std::vector<int> leaves;
  for (int64_t k = 0; k < n; ++k) leaves.push_back(t.product(k));
  t.root = balanced_over(t, leaves, 0, leaves.size());
  return t;
}

SumTree SumTree::chains_then_balanced(int64_t n, int64_t chunk) {
  if (chunk <= 0) throw ContractError("SumTree::chains_then_balanced: chunk must be >= 1");
  SumTree t;
  std::vector<int> leaves;
  for (int64_t k = 0; k < n; k += chunk) leaves.push_back(t.chain(k, std::min(n, k + chunk)));
  if (leaves.empty()) leaves.push_back(t.chain(0, 0));
  t.root = balanced_over(t, leaves, 0, leaves.size());
  return t;
}

SumTree SumTree::chains_then_sequential(int64_t n, int64_t chunk) {
  if (chunk <= 0) throw ContractError("SumTree::chains_then_sequential: chunk must be >= 1");
  SumTree t;
  int acc = t.zero();
  for (int64_t k = 0; k < n; k += chunk) {
    const int c = t.chain(k, std::min(n, k + chunk));
    acc = t.add(acc, c);
  }
  t.root = acc;
  return t;
}

void SumTree::validate(int64_t n) const {
  if (root < 0 || root >= static_cast<int>(nodes.size()))
    throw ContractError(fmt::format("SumTree: root {} is not a node (the tree has {} nodes)", root, nodes.size()));
  std::vector<int> covered(static_cast<size_t>(n), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const SumNode& s = nodes[i];
    switch (s.kind) {
      case SumNode::Kind::product:
      case SumNode::Kind::chain:
        if (s.first < 0 || s.last > n || s.first > s.last)
          throw ContractError(fmt::format("SumTree: node {} covers products [{}, {}) outside [0, {})", i, s.first,
                                          s.last, n));
        if (s.kind == SumNode::Kind::product && s.last != s.first + 1)
          throw ContractError(fmt::format("SumTree: product node {} must cover one product", i));
        break;
      case SumNode::Kind::zero:
        break;
      case SumNode::Kind::add:
        if (s.left < 0 || s.right < 0 || s.left >= static_cast<int>(i) || s.right >= static_cast<int>(i) ||
            s.left == s.right)
          throw ContractError(fmt::format(
              "SumTree: add node {} has children {} and {} (must be distinct earlier nodes)", i, s.left, s.right));
        break;
    }
  }
  // Only nodes reachable from the root count (children are earlier nodes, so this terminates);
  // a node reached twice would add its value twice.
  std::vector<int> stack = {root};
  std::vector<int> visits(nodes.size(), 0);
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    if (++visits[static_cast<size_t>(i)] > 1)
      throw ContractError(fmt::format("SumTree: node {} is used more than once", i));
    const SumNode& s = nodes[static_cast<size_t>(i)];
    if (s.kind == SumNode::Kind::add) {
      stack.push_back(s.left);
      stack.push_back(s.right);
    } else {
      for (int64_t k = s.first; k < s.last; ++k) ++covered[static_cast<size_t>(k)];
    }
  }
  for (int64_t k = 0; k < n; ++k)
    if (covered[static_cast<size_t>(k)] != 1)
      throw ContractError(fmt::format("SumTree: product {} is covered {} times (must be once; the list has {})", k,
                                      covered[static_cast<size_t>(k)], n));
}

uint32_t SumTree::evaluate(std::span<const uint32_t> products) const {
  std::vector<uint32_t> value(nodes.size(), 0);
  const auto n = static_cast<int64_t>(products.size());
  for (size_t i = 0; i < nodes.size() && static_cast<int>(i) <= root; ++i) {
    const SumNode& s = nodes[i];
    switch (s.kind) {
      case SumNode::Kind::product:
        if (s.first < 0 || s.first >= n) throw ContractError("SumTree::evaluate: product index out of range");
        value[i] = products[static_cast<size_t>(s.first)];
        break;
      case SumNode::Kind::chain: {
        if (s.first < 0 || s.last > n) throw ContractError("SumTree::evaluate: chain out of range");
        uint32_t acc = 0;
        for (int64_t k = s.first; k < s.last; ++k) acc = fp32_add(acc, products[static_cast<size_t>(k)]);
        value[i] = acc;
        break;
      }
      case SumNode::Kind::zero:
        value[i] = 0;
        break;
      case SumNode::Kind::add:
        value[i] = fp32_add(value[static_cast<size_t>(s.left)], value[static_cast<size_t>(s.right)]);
        break;
    }
  }
  return value[static_cast<size_t>(root)];
}

std::string SumTree::to_string() const {
  std::function<std::string(int)> text = [&](int i) -> std::string {
    const SumNode& s = nodes[static_cast<size_t>(i)];
    switch (s.kind) {
      case SumNode::Kind::product:
        return fmt::format("p{}", s.first);
      case SumNode::Kind::chain:
        return fmt::format("chain[{},{})", s.first, s.last);
      case SumNode::Kind::zero:
        return "+0";
      case SumNode::Kind::add:
        return fmt::format("add({}, {})", text(s.left), text(s.right));
    }
    return "?";
  };
  if (root < 0 || root >= static_cast<int>(nodes.size())) return "<empty>";
  return text(root);
}

AccumulationOrder AccumulationOrder::sequential() { return AccumulationOrder{}; }

AccumulationOrder AccumulationOrder::tiled(int64_t chunk) {
  if (chunk <= 0) throw ContractError(fmt::format("AccumulationOrder::tiled: chunk {} must be >= 1", chunk));
  AccumulationOrder o;
  o.kind_ = Kind::tiled;
  o.chunk_ = chunk;
  return o;
}

AccumulationOrder AccumulationOrder::tree(SumTree tree) {
  AccumulationOrder o;
  o.kind_ = Kind::tree;
  o.tree_ = std::move(tree);
  return o;
}

AccumulationOrder AccumulationOrder::tree(TreeBuilder builder) {
  if (!builder) throw ContractError("AccumulationOrder::tree: empty builder");
  AccumulationOrder o;
  o.kind_ = Kind::tree;
  o.builder_ = std::move(builder);
  return o;
}

AccumulationOrder AccumulationOrder::callback(Callback cb) {
  if (!cb) throw ContractError("AccumulationOrder::callback: empty callback");
  AccumulationOrder o;
  o.kind_ = Kind::callback;
  o.callback_ = std::move(cb);
  return o;
}

AccumulationOrder& AccumulationOrder::with_sum_labels(std::vector<std::string> labels) {
  sum_labels_ = std::move(labels);
  return *this;
}

namespace {
uint32_t reduce_sequential(std::span<const uint32_t> p) {
  uint32_t acc = 0;
  for (uint32_t x : p) acc = fp32_add(acc, x);
  return acc;
}
uint32_t reduce_tiled(std::span<const uint32_t> p, int64_t chunk) {
  uint32_t acc = 0;
  const auto n = static_cast<int64_t>(p.size());
  for (int64_t k = 0; k < n; k += chunk) {
    const int64_t len = std::min(chunk, n - k);
    acc = fp32_add(acc, reduce_sequential(p.subspan(static_cast<size_t>(k), static_cast<size_t>(len))));
  }
  return acc;
}
}  // namespace

uint32_t AccumulationOrder::reduce(std::span<const uint32_t> products, std::span<const int64_t> out_index) const {
  switch (kind_) {
    case Kind::sequential:
      return reduce_sequential(products);
    case Kind::tiled:
      return reduce_tiled(products, chunk_);
    case Kind::tree: {
      const auto n = static_cast<int64_t>(products.size());
      if (builder_) {
        const SumTree t = builder_(n);
        t.validate(n);
        return t.evaluate(products);
      }
      tree_.validate(n);
      return tree_.evaluate(products);
    }
    case Kind::callback:
      return callback_(products, out_index);
  }
  return 0;
}

std::string AccumulationOrder::to_string() const {
  std::string s;
  switch (kind_) {
    case Kind::sequential:
      s = "sequential";
      break;
    case Kind::tiled:
      s = fmt::format("tiled({})", chunk_);
      break;
    case Kind::tree:
      s = builder_ ? "tree(builder)" : fmt::format("tree({})", tree_.to_string());
      break;
    case Kind::callback:
      s = "callback";
      break;
  }
  if (!sum_labels_.empty()) s += fmt::format(" over {}", labels_text(sum_labels_));
  return s;
}

Tensor<uint32_t> contract_bf16(const Tensor<uint16_t>& a, const Tensor<uint16_t>& b,
                               const std::vector<std::string>& out_labels, const AccumulationOrder& order) {
  const Plan p = make_plan(a, b, out_labels, order.sum_labels_);
  const uint16_t* A = a.storage_data();
  const uint16_t* B = b.storage_data();
  const int64_t n = p.sum.size;
  // A fixed tree is checked once against the summed size.
  SumTree built;
  const SumTree* tree = nullptr;
  if (order.kind_ == AccumulationOrder::Kind::tree) {
    if (order.builder_) {
      built = order.builder_(n);
      tree = &built;
    } else {
      tree = &order.tree_;
    }
    try {
      tree->validate(n);
    } catch (const ContractError& e) {
      throw ContractError(fmt::format("contract_bf16: the tree does not fit the summed space {} of {} products: {}",
                                      labels_text(p.sum.labels), n, e.what()));
    }
  }
  std::vector<uint32_t> products(static_cast<size_t>(n));
  return run_plan<uint32_t>(p, [&](int64_t pa, int64_t pb, const std::vector<int64_t>& idx) {
    for (int64_t k = 0; k < n; ++k)
      products[static_cast<size_t>(k)] = bf16_mul(A[pa + p.a_sum_off[static_cast<size_t>(k)]],
                                                  B[pb + p.b_sum_off[static_cast<size_t>(k)]]);
    if (tree != nullptr) return tree->evaluate(products);
    return order.reduce(products, idx);
  });
}

std::vector<uint32_t> bf16_products(const Tensor<uint16_t>& a, const Tensor<uint16_t>& b,
                                    const std::vector<std::string>& out_labels, std::span<const int64_t> out_index,
                                    const std::vector<std::string>& sum_labels) {
  const Plan p = make_plan(a, b, out_labels, sum_labels);
  if (out_index.size() != p.out_shape.size())
    throw ContractError(fmt::format("bf16_products: index of rank {} for output labels {}", out_index.size(),
                                    labels_text(out_labels)));
  int64_t pa = p.a_offset;
  int64_t pb = p.b_offset;
  for (size_t d = 0; d < out_index.size(); ++d) {
    if (out_index[d] < 0 || out_index[d] >= p.out_shape[d])
      throw ContractError(fmt::format("bf16_products: index {} out of range for '{}' of size {}", out_index[d],
                                      out_labels[d], p.out_shape[d]));
    pa += out_index[d] * p.a_out_stride[d];
    pb += out_index[d] * p.b_out_stride[d];
  }
  std::vector<uint32_t> products;
  products.reserve(static_cast<size_t>(p.sum.size));
  for (int64_t k = 0; k < p.sum.size; ++k)
    products.push_back(bf16_mul(a.storage_data()[pa + p.a_sum_off[static_cast<size_t>(k)]],
                                b.storage_data()[pb + p.b_sum_off[static_cast<size_t>(k)]]));
  return products;
}

// --- (c) integer ------------------------------------------------------------------------------------

Tensor<int32_t> contract_int8(const Tensor<int8_t>& a, const Tensor<int8_t>& b, const std::vector<std::string>& out_labels) {
  const Plan p = make_plan(a, b, out_labels, {});
  const int8_t* A = a.storage_data();
  const int8_t* B = b.storage_data();
  const int64_t n = p.sum.size;
  return run_plan<int32_t>(p, [&](int64_t pa, int64_t pb, const std::vector<int64_t>&) {
    int32_t acc = 0;
    for (int64_t k = 0; k < n; ++k)
      acc = int8_mac(acc, A[pa + p.a_sum_off[static_cast<size_t>(k)]], B[pb + p.b_sum_off[static_cast<size_t>(k)]]);
    return acc;
  });
}

Tensor<int64_t> contract_int16(const Tensor<int16_t>& a, const Tensor<int16_t>& b,
                               const std::vector<std::string>& out_labels) {
  const Plan p = make_plan(a, b, out_labels, {});
  const int16_t* A = a.storage_data();
  const int16_t* B = b.storage_data();
  const int64_t n = p.sum.size;
  return run_plan<int64_t>(p, [&](int64_t pa, int64_t pb, const std::vector<int64_t>&) {
    int64_t acc = 0;
    for (int64_t k = 0; k < n; ++k)
      acc = int16_mac48(acc, A[pa + p.a_sum_off[static_cast<size_t>(k)]], B[pb + p.b_sum_off[static_cast<size_t>(k)]]);
    return acc;
  });
}

}  // namespace fetta::verif
