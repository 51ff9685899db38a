#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "ast.h"
#include "quire/engine/template/template.h"

namespace quire::engine::jinja {

// Runs a parsed template once. Scoping follows jinja2: each loop iteration,
// macro call and with block has its own scope (assignments inside do not leak
// out), while if blocks share the enclosing one; macros see the scope they
// were defined in as it is when they are called.
class Interpreter {
 public:
  Interpreter(const std::map<std::string, Value>& globals, const RenderOptions& options);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;
  Text run(const ast::Body& body);

 private:
  struct Scope {
    std::unordered_map<std::string, Value> variables;
    std::shared_ptr<Scope> parent;
  };
  using ScopePtr = std::shared_ptr<Scope>;
  enum class Flow { Normal, Break, Continue };

  Flow execute(const ast::Body& body, const ScopePtr& scope);
  Flow execute(const ast::Stmt& stmt, const ScopePtr& scope);
  Flow execute_for(const ast::Stmt& stmt, const ScopePtr& scope);
  Value evaluate(const ast::Expr& expr, const ScopePtr& scope);
  Value evaluate_inner(const ast::Expr& expr, const ScopePtr& scope);
  Value evaluate_filter(const ast::Expr& expr, const Value* input, const ScopePtr& scope);
  Value evaluate_compare(const ast::Expr& expr, const ScopePtr& scope);
  CallArgs evaluate_arguments(const ast::Expr& expr, std::size_t first, const ScopePtr& scope);
  Value call(const ast::Expr& expr, const ScopePtr& scope, const Value* caller);

  Value lookup(const std::string& name, const ScopePtr& scope) const;
  void assign(const ast::Target& target, const Value& value, const ScopePtr& scope);
  Text capture(const ast::Body& body, const ScopePtr& scope);
  void emit(const Text& text);
  void step();
  Value make_macro(const ast::Stmt& stmt, const ScopePtr& scope, std::string name);
  static ScopePtr child(const ScopePtr& parent);

  const RenderOptions& options_;
  ScopePtr globals_;
  std::vector<Text> outputs_;
  // Macros refer to their scope weakly (a scope holds its macros), so the
  // scopes they were defined in stay alive here until the render ends.
  std::vector<ScopePtr> macro_scopes_;
  // Namespaces the template made; emptied at the end, since one may hold itself.
  std::vector<Value> namespaces_;
  std::size_t steps_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace quire::engine::jinja
