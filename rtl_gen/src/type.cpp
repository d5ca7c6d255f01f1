#include "rtl_gen/type.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include "rtl_gen/error.hpp"

namespace fetta::rtl {

namespace {
[[noreturn]] void bad(const std::string& what, const std::string& msg) {
  throw RtlError(ErrorKind::type, what, msg, SourceLoc{});
}
}  // namespace

Type Type::uint(int width) {
  if (width < 1) bad(fmt::format("UInt<{}>", width), "a bit vector needs a width of at least 1");
  Type t;
  t.kind_ = Kind::uint;
  t.width_ = width;
  return t;
}

Type Type::sint(int width) {
  if (width < 1) bad(fmt::format("SInt<{}>", width), "a bit vector needs a width of at least 1");
  Type t = uint(width);
  t.kind_ = Kind::sint;
  return t;
}

Type Type::vec(const Type& elem, int count) {
  if (count < 1) bad(fmt::format("Vec<{}>", count), "a vector needs at least one element");
  Type t;
  t.kind_ = Kind::vec;
  t.count_ = count;
  t.elem_ = std::make_shared<Type>(elem);
  return t;
}

Type Type::bundle(std::vector<Field> fields) {
  if (fields.empty()) bad("Bundle{}", "a bundle needs at least one field");
  for (size_t i = 0; i < fields.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (fields[i].name == fields[j].name) bad(fields[i].name, "bundle field declared twice");
  Type t;
  t.kind_ = Kind::bundle;
  t.fields_ = std::move(fields);
  return t;
}

int Type::width() const {
  if (is_ground()) return width_;
  int w = 0;
  for (const Leaf& l : leaves()) w += l.width;
  return w;
}

int Type::count() const { return count_; }
const Type& Type::elem() const { return *elem_; }
const std::vector<Field>& Type::fields() const { return fields_; }

int Type::field_index(const std::string& name) const {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return static_cast<int>(i);
  return -1;
}

int Type::leaf_count() const {
  switch (kind_) {
    case Kind::uint:
    case Kind::sint: return 1;
    case Kind::vec: return count_ * elem_->leaf_count();
    case Kind::bundle: {
      int n = 0;
      for (const Field& f : fields_) n += f.type->leaf_count();
      return n;
    }
  }
  return 0;
}

std::vector<Leaf> Type::leaves() const {
  std::vector<Leaf> out;
  switch (kind_) {
    case Kind::uint:
    case Kind::sint: out.push_back(Leaf{"", width_, kind_ == Kind::sint, false}); break;
    case Kind::vec:
      for (int i = 0; i < count_; ++i)
        for (Leaf l : elem_->leaves()) {
          l.suffix = fmt::format("_{}{}", i, l.suffix);
          out.push_back(l);
        }
      break;
    case Kind::bundle:
      for (const Field& f : fields_)
        for (Leaf l : f.type->leaves()) {
          l.suffix = "_" + f.name + l.suffix;
          l.flipped = l.flipped != f.flipped;
          out.push_back(l);
        }
      break;
  }
  return out;
}

std::string Type::str() const {
  switch (kind_) {
    case Kind::uint: return fmt::format("UInt<{}>", width_);
    case Kind::sint: return fmt::format("SInt<{}>", width_);
    case Kind::vec: return fmt::format("Vec<{}, {}>", count_, elem_->str());
    case Kind::bundle: {
      std::vector<std::string> parts;
      for (const Field& f : fields_) parts.push_back(fmt::format("{}{}: {}", f.flipped ? "flip " : "", f.name, f.type->str()));
      return fmt::format("Bundle{{{}}}", fmt::join(parts, ", "));
    }
  }
  return "?";
}

bool Type::operator==(const Type& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::uint:
    case Kind::sint: return width_ == o.width_;
    case Kind::vec: return count_ == o.count_ && *elem_ == *o.elem_;
    case Kind::bundle:
      if (fields_.size() != o.fields_.size()) return false;
      for (size_t i = 0; i < fields_.size(); ++i)
        if (fields_[i].name != o.fields_[i].name || fields_[i].flipped != o.fields_[i].flipped ||
            !(*fields_[i].type == *o.fields_[i].type))
          return false;
      return true;
  }
  return false;
}

Type flip(const Type& t) {
  if (t.kind() != Type::Kind::bundle) return t;
  std::vector<Field> f = t.fields();
  for (Field& x : f) x.flipped = !x.flipped;
  return Type::bundle(std::move(f));
}

int clog2(long long n) {
  int b = 0;
  while ((1LL << b) < n) ++b;
  return b < 1 ? 1 : b;
}

}  // namespace fetta::rtl
