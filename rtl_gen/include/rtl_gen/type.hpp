// Hardware types: unsigned/signed bit vectors (ground types), vectors of a type, and bundles
// (named fields, nestable, each optionally flipped). Aggregates flatten to ground signals
// named <prefix>_<field>_<index> when they reach SystemVerilog.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace fetta::rtl {

class Type;

struct Field {
  std::string name;
  std::shared_ptr<const Type> type;
  bool flipped = false;  // direction reversed relative to the bundle (e.g. `ready`)
};

// A ground leaf of an aggregate type, in declaration order.
struct Leaf {
  std::string suffix;  // "" for a ground type, else "_a", "_b_0", ...
  int width = 0;
  bool is_signed = false;
  bool flipped = false;  // odd number of flips on the path from the root
};

class Type {
 public:
  enum class Kind { uint, sint, vec, bundle };

  static Type uint(int width);
  static Type sint(int width);
  static Type vec(const Type& elem, int count);
  static Type bundle(std::vector<Field> fields);

  Kind kind() const { return kind_; }
  bool is_ground() const { return kind_ == Kind::uint || kind_ == Kind::sint; }
  bool is_signed() const { return kind_ == Kind::sint; }
  int width() const;        // ground: bit width; aggregate: total bits of all leaves
  int count() const;        // vec: element count
  const Type& elem() const; // vec: element type
  const std::vector<Field>& fields() const;
  int field_index(const std::string& name) const;  // -1 if absent
  int leaf_count() const;
  std::vector<Leaf> leaves() const;
  std::string str() const;  // "UInt<8>", "Vec<4, UInt<8>>", "Bundle{a: UInt<8>, flip b: UInt<1>}"
  bool operator==(const Type& o) const;

 private:
  Kind kind_ = Kind::uint;
  int width_ = 0;
  int count_ = 0;
  std::shared_ptr<const Type> elem_;
  std::vector<Field> fields_;
};

// Short spellings for generator code.
inline Type UInt(int w) { return Type::uint(w); }
inline Type SInt(int w) { return Type::sint(w); }
inline Type Vec(const Type& t, int n) { return Type::vec(t, n); }
inline Field field(std::string name, const Type& t) { return {std::move(name), std::make_shared<Type>(t), false}; }
inline Field flipped(std::string name, const Type& t) { return {std::move(name), std::make_shared<Type>(t), true}; }
inline Type Bundle(std::vector<Field> f) { return Type::bundle(std::move(f)); }
// The same bundle seen from the other side: every field flipped.
Type flip(const Type& t);

int clog2(long long n);  // bits to index n things (at least 1)

}  // namespace fetta::rtl
