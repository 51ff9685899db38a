#pragma once

// The values a template computes with. They follow Python's semantics, since
// chat templates are written for (and checked against) Python's jinja2:
// printing True/None/1.0/['a'] as Python does, integer and float division,
// truthiness, equality across int/float/bool, and errors where Python raises.
//
// Lists and dicts are shared by reference, so copying a Value is cheap. As in
// Python's immutable sandbox, only namespace() objects change after
// construction, besides list.pop() and list.clear(); every copy sees a change.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "quire/engine/template/text.h"

namespace quire::engine::jinja {

class Value;
class Dict;
using ValueList = std::vector<Value>;

// Arguments of a call: `f(a, b, key=c)`.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Something a template can call: a built-in function, a bound method, a macro.
struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> call;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

  // Undefined, as a name the context does not have.
  Value();
  static Value undefined(std::string hint = {});
  static Value none();
  Value(bool value);          // NOLINT(google-explicit-constructor): values read naturally
  Value(std::int64_t value);  // NOLINT
  Value(int value);           // NOLINT
  Value(double value);        // NOLINT
  Value(Text text);           // NOLINT
  Value(std::string_view bytes, bool literal = false);  // NOLINT
  Value(const char* bytes);                             // NOLINT
  static Value list(ValueList items);
  static Value tuple(ValueList items);
  static Value dict(Dict entries);
  static Value make_namespace(Dict attributes);
  static Value function(std::string name, std::function<Value(CallArgs&)> call);

  Kind kind() const;
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  // int, float or bool: what Python's arithmetic accepts.
  bool is_number() const;
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }  // lists and tuples
  bool is_tuple() const;
  bool is_dict() const { return kind() == Kind::Dict; }
  bool is_namespace() const { return kind() == Kind::Namespace; }
  bool is_callable() const { return kind() == Kind::Callable; }

  bool as_bool() const;
  std::int64_t as_int() const;  // bool and int
  double as_double() const;     // bool, int and float
  const Text& as_text() const;
  const std::string& as_string() const { return as_text().bytes(); }
  const ValueList& as_list() const;
  // The list itself, for the two changes jinja2's immutable sandbox still
  // allows (list.pop and list.clear); every copy of the value sees them.
  ValueList& mutable_list() const;
  // Dicts and namespaces; a namespace's attributes may be changed through it.
  Dict& as_dict() const;
  const Callable& as_callable() const;
  // What an undefined value was called, for error messages.
  const std::string& undefined_hint() const;

  // Python's bool(value).
  bool truthy() const;
  // Python's type name, for error messages ('str', 'list', 'NoneType').
  std::string type_name() const;
  // Python's str(value) and repr(value); undefined prints as nothing.
  Text str() const;
  Text repr() const;

  // Python's ==, across int, float and bool, element by element in containers.
  friend bool operator==(const Value& a, const Value& b);

 private:
  struct UndefinedState {
    std::shared_ptr<const std::string> hint;
  };
  using Storage = std::variant<UndefinedState, std::nullptr_t, bool, std::int64_t, double,
                               std::shared_ptr<const Text>, std::shared_ptr<ValueList>,
                               std::shared_ptr<Dict>, std::shared_ptr<const Callable>>;
  explicit Value(Storage storage, bool flag = false);

  Storage storage_;
  bool flag_ = false;  // tuple for lists, namespace for dicts
};

// An insertion-ordered dict, as Python's.
class Dict {
 public:
  using Entry = std::pair<Value, Value>;

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  const Value* find(const char* key) const { return find(std::string_view(key)); }
  // Replaces the value of an existing key in place, else appends.
  void set(Value key, Value value);
  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

// Python's repr of a float: the shortest text that reads back as the same
// double, with ".0" on integral values and an exponent outside 1e-4..1e16.
std::string python_float_repr(double value);

// Python's ordering (<) of two values; throws TemplateError where Python
// raises TypeError (mixed types, None, dicts).
bool python_less(const Value& a, const Value& b);

}  // namespace quire::engine::jinja
