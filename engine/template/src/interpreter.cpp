#include "interpreter.h"

#include "builtins.h"
#include "runtime.h"

namespace quire::engine::jinja {

using ast::Expr;
using ast::Stmt;

namespace {

TemplateError with_construct(const TemplateError& error, const std::string& construct) {
  if (error.construct() != "expression" || error.raised()) return error;
  return TemplateError(error.problem(), error.line(), construct, false);
}

}  // namespace

Interpreter::Interpreter(const std::map<std::string, Value>& globals, const RenderOptions& options)
    : options_(options), globals_(std::make_shared<Scope>()) {
  add_builtins(globals_->variables, options, namespaces_);
  for (const auto& [name, value] : globals)
    globals_->variables[name] = value;
}

Interpreter::~Interpreter() {
  for (const Value& ns : namespaces_)
    ns.as_dict().clear();
}

Text Interpreter::run(const ast::Body& body) {
  outputs_.emplace_back();
  execute(body, child(globals_));
  Text result = std::move(outputs_.back());
  outputs_.pop_back();
  return result;
}

Interpreter::ScopePtr Interpreter::child(const ScopePtr& parent) {
  auto scope = std::make_shared<Scope>();
  scope->parent = parent;
  return scope;
}

void Interpreter::step() {
  if (++steps_ > options_.max_steps)
    throw TemplateError("the template took more than " + std::to_string(options_.max_steps) +
                            " steps; it may loop without end",
                        0, "limit");
}

void Interpreter::emit(const Text& text) {
  Text& out = outputs_.back();
  if (out.size() + text.size() > options_.max_output_bytes)
    throw TemplateError(
        "the output exceeds " + std::to_string(options_.max_output_bytes) + " bytes", 0, "limit");
  out.append(text);
}

Text Interpreter::capture(const ast::Body& body, const ScopePtr& scope) {
  outputs_.emplace_back();
  try {
    execute(body, scope);
  } catch (...) {
    outputs_.pop_back();
    throw;
  }
  Text text = std::move(outputs_.back());
  outputs_.pop_back();
  return text;
}

Value Interpreter::lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s != nullptr; s = s->parent.get()) {
    const auto it = s->variables.find(name);
    if (it != s->variables.end()) return it->second;
  }
  return Value::undefined("'" + name + "' is undefined");
}

void Interpreter::assign(const ast::Target& target, const Value& value, const ScopePtr& scope) {
  if (!target.attribute.empty()) {
    const Value object = lookup(target.names[0], scope);
    if (!object.is_namespace())
      throw TemplateError("cannot assign attribute on non-namespace object", 0, "statement 'set'");
    object.as_dict().set(Value(std::string_view(target.attribute)), value);
    return;
  }
  if (!target.unpack) {
    scope->variables[target.names[0]] = value;
    return;
  }
  const ValueList items = iterate(value);
  if (items.size() != target.names.size())
    throw TemplateError(
        items.size() < target.names.size()
            ? "not enough values to unpack (expected " + std::to_string(target.names.size()) +
                  ", got " + std::to_string(items.size()) + ")"
            : "too many values to unpack (expected " + std::to_string(target.names.size()) + ")");
  for (std::size_t i = 0; i < items.size(); ++i)
    scope->variables[target.names[i]] = items[i];
}

Interpreter::Flow Interpreter::execute(const ast::Body& body, const ScopePtr& scope) {
  for (const auto& stmt : body.statements) {
    const Flow flow = execute(*stmt, scope);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::execute(const Stmt& stmt, const ScopePtr& scope) {
  step();
  try {
    switch (stmt.kind) {
      case Stmt::Kind::Text:
        emit(stmt.text);
        return Flow::Normal;
      case Stmt::Kind::Output:
        emit(evaluate(*stmt.expr, scope).str());
        return Flow::Normal;
      case Stmt::Kind::If:
        for (const auto& [condition, body] : stmt.branches) {
          if (evaluate(*condition, scope).truthy()) return execute(body, scope);
        }
        return execute(stmt.else_body, scope);
      case Stmt::Kind::For:
        return execute_for(stmt, scope);
      case Stmt::Kind::Set:
        assign(stmt.target, evaluate(*stmt.expr, scope), scope);
        return Flow::Normal;
      case Stmt::Kind::SetBlock: {
        Value text(capture(stmt.body, scope));
        if (stmt.filter) text = evaluate_filter(*stmt.filter, &text, scope);
        assign(stmt.target, text, scope);
        return Flow::Normal;
      }
      case Stmt::Kind::Macro:
        scope->variables[stmt.name] = make_macro(stmt, scope, stmt.name);
        return Flow::Normal;
      case Stmt::Kind::CallBlock: {
        const Value caller = make_macro(stmt, scope, "caller");
        emit(call(*stmt.expr, scope, &caller).str());
        return Flow::Normal;
      }
      case Stmt::Kind::FilterBlock: {
        const Value text(capture(stmt.body, scope));
        emit(evaluate_filter(*stmt.filter, &text, scope).str());
        return Flow::Normal;
      }
      case Stmt::Kind::With: {
        ScopePtr inner = child(scope);
        for (const auto& [target, expr] : stmt.assignments)
          assign(target, evaluate(*expr, scope), inner);
        return execute(stmt.body, inner);
      }
      case Stmt::Kind::Break:
        return Flow::Break;
      case Stmt::Kind::Continue:
        return Flow::Continue;
      case Stmt::Kind::Scope:
        return execute(stmt.body, scope);
    }
  } catch (const TemplateError& error) {
    if (error.line() == 0) throw error.at_line(stmt.line);
    throw;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::execute_for(const Stmt& stmt, const ScopePtr& scope) {
  ValueList items = iterate(evaluate(*stmt.expr, scope));
  if (stmt.condition) {
    ValueList kept;
    for (Value& item : items) {
      step();
      ScopePtr probe = child(scope);
      assign(stmt.target, item, probe);
      if (evaluate(*stmt.condition, probe).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  const auto count = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < count; ++i) {
    step();
    ScopePtr inner = child(scope);
    assign(stmt.target, items[static_cast<std::size_t>(i)], inner);
    Dict loop;
    auto put = [&loop](const char* key, Value value) { loop.set(Value(key), std::move(value)); };
    put("index", Value(i + 1));
    put("index0", Value(i));
    put("revindex", Value(count - i));
    put("revindex0", Value(count - i - 1));
    put("first", Value(i == 0));
    put("last", Value(i == count - 1));
    put("length", Value(count));
    put("depth", Value(1));
    put("depth0", Value(0));
    put("previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)]
                          : Value::undefined("there is no previous item"));
    put("nextitem", i + 1 < count ? items[static_cast<std::size_t>(i + 1)]
                                  : Value::undefined("there is no next item"));
    put("cycle", Value::function("cycle", [i](CallArgs& args) -> Value {
          if (args.positional.empty()) throw TemplateError("no items for cycling given");
          return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
        }));
    inner->variables["loop"] = Value::dict(std::move(loop));
    if (execute(stmt.body, inner) == Flow::Break) break;
  }
  if (count == 0) return execute(stmt.else_body, child(scope));
  return Flow::Normal;
}

Value Interpreter::make_macro(const Stmt& stmt, const ScopePtr& scope, std::string name) {
  const Stmt* definition = &stmt;
  macro_scopes_.push_back(scope);
  std::weak_ptr<Scope> weak_scope = scope;
  return Value::function(name, [this, definition, weak_scope, name](CallArgs& args) -> Value {
    const ScopePtr definition_scope = weak_scope.lock();
    if (!definition_scope)
      throw TemplateError("macro '" + name + "' was called after its render ended");
    if (depth_ >= options_.max_call_depth)
      throw TemplateError("macros nest deeper than " + std::to_string(options_.max_call_depth) +
                              " calls; the template may recurse without end",
                          0, "limit");
    const auto& parameters = definition->parameters;
    if (args.positional.size() > parameters.size())
      throw TemplateError("macro '" + name + "' takes not more than " +
                          std::to_string(parameters.size()) + " argument(s)");
    ScopePtr inner = child(definition_scope);
    std::vector<bool> bound(parameters.size(), false);
    for (std::size_t i = 0; i < args.positional.size(); ++i) {
      inner->variables[parameters[i].first] = args.positional[i];
      bound[i] = true;
    }
    for (auto& [key, value] : args.keyword) {
      std::size_t i = 0;
      while (i < parameters.size() && parameters[i].first != key)
        ++i;
      if (i == parameters.size()) {
        if (key == "caller") {
          inner->variables[key] = value;
          continue;
        }
        throw TemplateError("macro '" + name + "' takes no keyword argument '" + key + "'");
      }
      if (bound[i])
        throw TemplateError("macro '" + name + "' got multiple values for argument '" + key + "'");
      inner->variables[key] = value;
      bound[i] = true;
    }
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      if (bound[i]) continue;
      inner->variables[parameters[i].first] =
          parameters[i].second
              ? evaluate(*parameters[i].second, inner)
              : Value::undefined("parameter '" + parameters[i].first + "' was not provided");
    }
    ++depth_;
    try {
      Text text = capture(definition->body, inner);
      --depth_;
      return Value(std::move(text));
    } catch (...) {
      --depth_;
      throw;
    }
  });
}

CallArgs Interpreter::evaluate_arguments(const Expr& expr, std::size_t first,
                                         const ScopePtr& scope) {
  CallArgs args;
  for (std::size_t i = first; i < expr.children.size(); ++i)
    args.positional.push_back(evaluate(*expr.children[i], scope));
  for (const auto& [name, value] : expr.keyword)
    args.keyword.emplace_back(name, evaluate(*value, scope));
  return args;
}

Value Interpreter::call(const Expr& expr, const ScopePtr& scope, const Value* caller) {
  const Value callee = evaluate(*expr.children[0], scope);
  require_defined(callee);
  if (!callee.is_callable())
    throw TemplateError("'" + callee.type_name() + "' object is not callable");
  CallArgs args = evaluate_arguments(expr, 1, scope);
  if (caller) args.keyword.emplace_back("caller", *caller);
  return callee.as_callable().call(args);
}

Value Interpreter::evaluate_filter(const Expr& expr, const Value* input, const ScopePtr& scope) {
  const Value value = expr.children[0] ? (expr.children[0]->kind == Expr::Kind::Filter && input
                                              ? evaluate_filter(*expr.children[0], input, scope)
                                              : evaluate(*expr.children[0], scope))
                                       : *input;
  CallArgs args = evaluate_arguments(expr, 1, scope);
  try {
    return apply_filter(expr.name, value, args);
  } catch (const TemplateError& error) {
    throw with_construct(error, "filter '" + expr.name + "'");
  }
}

Value Interpreter::evaluate_compare(const Expr& expr, const ScopePtr& scope) {
  Value left = evaluate(*expr.children[0], scope);
  for (std::size_t i = 0; i < expr.ops.size(); ++i) {
    Value right = evaluate(*expr.children[i + 1], scope);
    const std::string& op = expr.ops[i];
    bool result = false;
    if (op == "in")
      result = contains(right, left);
    else if (op == "not in")
      result = !contains(right, left);
    else
      result = compare(op, left, right);
    if (!result) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Value Interpreter::evaluate(const Expr& expr, const ScopePtr& scope) {
  step();
  try {
    return evaluate_inner(expr, scope);
  } catch (const TemplateError& error) {
    if (error.line() == 0) throw error.at_line(expr.line);
    throw;
  }
}

Value Interpreter::evaluate_inner(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case Expr::Kind::Literal:
      return expr.value;
    case Expr::Kind::Name:
      return lookup(expr.name, scope);
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      ValueList items;
      for (const auto& child_expr : expr.children)
        items.push_back(evaluate(*child_expr, scope));
      return expr.kind == Expr::Kind::List ? Value::list(std::move(items))
                                           : Value::tuple(std::move(items));
    }
    case Expr::Kind::Dict: {
      Dict dict;
      for (std::size_t i = 0; i + 1 < expr.children.size(); i += 2)
        dict.set(evaluate(*expr.children[i], scope), evaluate(*expr.children[i + 1], scope));
      return Value::dict(std::move(dict));
    }
    case Expr::Kind::GetAttr:
      return get_attribute(evaluate(*expr.children[0], scope), expr.name);
    case Expr::Kind::GetItem:
      return get_item(evaluate(*expr.children[0], scope), evaluate(*expr.children[1], scope));
    case Expr::Kind::Slice: {
      const Value object = evaluate(*expr.children[0], scope);
      Value bounds[3] = {Value::none(), Value::none(), Value::none()};
      for (int i = 0; i < 3; ++i) {
        if (expr.children[static_cast<std::size_t>(i) + 1])
          bounds[i] = evaluate(*expr.children[static_cast<std::size_t>(i) + 1], scope);
      }
      return slice(object, bounds[0], bounds[1], bounds[2]);
    }
    case Expr::Kind::Call:
      return call(expr, scope, nullptr);
    case Expr::Kind::Filter:
      return evaluate_filter(expr, nullptr, scope);
    case Expr::Kind::Test: {
      const Value subject = evaluate(*expr.children[0], scope);
      CallArgs args = evaluate_arguments(expr, 1, scope);
      try {
        return Value(apply_test(expr.name, subject, args) != expr.negated);
      } catch (const TemplateError& error) {
        throw with_construct(error, "test '" + expr.name + "'");
      }
    }
    case Expr::Kind::Negate:
      return negate(evaluate(*expr.children[0], scope));
    case Expr::Kind::Plus: {
      Value value = evaluate(*expr.children[0], scope);
      require_defined(value);
      if (!value.is_number())
        throw TemplateError("bad operand type for unary +: '" + value.type_name() + "'");
      return value.is_bool() ? Value(value.as_int()) : value;
    }
    case Expr::Kind::Not:
      return Value(!evaluate(*expr.children[0], scope).truthy());
    case Expr::Kind::Binary:
      return binary_operation(expr.name, evaluate(*expr.children[0], scope),
                              evaluate(*expr.children[1], scope));
    case Expr::Kind::And: {
      Value left = evaluate(*expr.children[0], scope);
      return left.truthy() ? evaluate(*expr.children[1], scope) : left;
    }
    case Expr::Kind::Or: {
      Value left = evaluate(*expr.children[0], scope);
      return left.truthy() ? left : evaluate(*expr.children[1], scope);
    }
    case Expr::Kind::Compare:
      return evaluate_compare(expr, scope);
    case Expr::Kind::Conditional:
      if (evaluate(*expr.children[0], scope).truthy()) return evaluate(*expr.children[1], scope);
      if (expr.children[2]) return evaluate(*expr.children[2], scope);
      return Value::undefined("the conditional expression had no else branch");
  }
  return Value::undefined();
}

}  // namespace quire::engine::jinja
