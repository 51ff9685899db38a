// The expression grammar of jinja2: tuples and conditionals down to
// literals, subscripts, calls, filters and tests.

#include "parser_state.h"
#include "runtime.h"

namespace quire::engine::jinja::detail {

// ---- expressions ----
// Comma-separated expressions become a tuple.
ExprPtr Parser::tuple_expression(bool with_conditional) {
  const int line = current().line;
  std::vector<ExprPtr> items;
  bool comma = false;
  while (true) {
    if (!items.empty()) {
      if (!skip_op(",")) break;
      comma = true;
      if (at_expression_end()) break;
    }
    items.push_back(expression(with_conditional));
  }
  if (!comma) return std::move(items.front());
  ExprPtr tuple = make_expr(Expr::Kind::Tuple, line);
  tuple->children = std::move(items);
  return tuple;
}

bool Parser::at_expression_end() const {
  const Token& token = current();
  return token.kind == Token::Kind::VariableEnd || token.kind == Token::Kind::BlockEnd ||
         (token.kind == Token::Kind::Operator && token.text == ")") ||
         (token.kind == Token::Kind::Name && (token.text == "in" || token.text == "if"));
}

ExprPtr Parser::expression(bool with_conditional) {
  ExprPtr expr = or_expression();
  if (!with_conditional) return expr;
  while (is_name("if")) {
    const int line = current().line;
    advance();
    ExprPtr condition = or_expression();
    ExprPtr otherwise;
    if (skip_name("else")) otherwise = expression(true);
    ExprPtr conditional = make_expr(Expr::Kind::Conditional, line);
    conditional->children.push_back(std::move(condition));
    conditional->children.push_back(std::move(expr));
    conditional->children.push_back(std::move(otherwise));
    expr = std::move(conditional);
  }
  return expr;
}

ExprPtr Parser::binary(Expr::Kind kind, ExprPtr left, ExprPtr right, int line,
                       const std::string& op) {
  ExprPtr node = make_expr(kind, line);
  node->name = op;
  node->children.push_back(std::move(left));
  node->children.push_back(std::move(right));
  return node;
}

ExprPtr Parser::or_expression() {
  ExprPtr left = and_expression();
  while (is_name("or")) {
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::Or, std::move(left), and_expression(), line);
  }
  return left;
}

ExprPtr Parser::and_expression() {
  ExprPtr left = not_expression();
  while (is_name("and")) {
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::And, std::move(left), not_expression(), line);
  }
  return left;
}

ExprPtr Parser::not_expression() {
  if (is_name("not")) {
    ExprPtr node = make_expr(Expr::Kind::Not, current().line);
    advance();
    node->children.push_back(not_expression());
    return node;
  }
  return compare_expression();
}

ExprPtr Parser::compare_expression() {
  const int line = current().line;
  ExprPtr first = math1();
  ExprPtr node;
  while (true) {
    std::string op;
    if (current().kind == Token::Kind::Operator &&
        (current().text == "==" || current().text == "!=" || current().text == "<" ||
         current().text == ">" || current().text == "<=" || current().text == ">=")) {
      op = current().text;
      advance();
    } else if (is_name("in")) {
      op = "in";
      advance();
    } else if (is_name("not") && peek().kind == Token::Kind::Name && peek().text == "in") {
      op = "not in";
      advance();
      advance();
    } else {
      break;
    }
    if (!node) {
      node = make_expr(Expr::Kind::Compare, line);
      node->children.push_back(std::move(first));
    }
    node->ops.push_back(op);
    node->children.push_back(math1());
  }
  return node ? std::move(node) : std::move(first);
}

ExprPtr Parser::math1() {
  ExprPtr left = concat();
  while (is_op("+") || is_op("-")) {
    const std::string op = current().text;
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::Binary, std::move(left), concat(), line, op);
  }
  return left;
}

ExprPtr Parser::concat() {
  ExprPtr left = math2();
  while (is_op("~")) {
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::Binary, std::move(left), math2(), line, "~");
  }
  return left;
}

ExprPtr Parser::math2() {
  ExprPtr left = power();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const std::string op = current().text;
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::Binary, std::move(left), power(), line, op);
  }
  return left;
}

ExprPtr Parser::power() {
  ExprPtr left = unary(true);
  while (is_op("**")) {
    const int line = current().line;
    advance();
    left = binary(Expr::Kind::Binary, std::move(left), unary(true), line, "**");
  }
  return left;
}

ExprPtr Parser::unary(bool with_filter) {
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    node = make_expr(is_op("-") ? Expr::Kind::Negate : Expr::Kind::Plus, current().line);
    advance();
    node->children.push_back(unary(false));
  } else {
    node = primary();
  }
  node = postfix(std::move(node));
  if (with_filter) node = filter_expression(std::move(node));
  return node;
}

ExprPtr Parser::primary() {
  const Token& token = current();
  const int line = token.line;
  if (token.kind == Token::Kind::Name) {
    const std::string name = token.text;
    advance();
    if (name == "true" || name == "True") return literal(Value(true), line);
    if (name == "false" || name == "False") return literal(Value(false), line);
    if (name == "none" || name == "None") return literal(Value::none(), line);
    ExprPtr node = make_expr(Expr::Kind::Name, line);
    node->name = name;
    return node;
  }
  if (token.kind == Token::Kind::String) {
    std::string text;
    while (current().kind == Token::Kind::String) {
      text += current().text;
      advance();
    }
    return literal(Value(std::string_view(text)), line);
  }
  if (token.kind == Token::Kind::Integer || token.kind == Token::Kind::Float) {
    Value number = token.number;
    advance();
    return literal(std::move(number), line);
  }
  if (skip_op("(")) {
    if (skip_op(")")) {
      ExprPtr node = make_expr(Expr::Kind::Tuple, line);
      return node;
    }
    ExprPtr inner = tuple_expression(true);
    expect_op(")");
    return inner;
  }
  if (skip_op("[")) {
    ExprPtr node = make_expr(Expr::Kind::List, line);
    while (!skip_op("]")) {
      if (!node->children.empty()) {
        expect_op(",");
        if (skip_op("]")) break;
      }
      node->children.push_back(expression(true));
    }
    return node;
  }
  if (skip_op("{")) {
    ExprPtr node = make_expr(Expr::Kind::Dict, line);
    while (!skip_op("}")) {
      if (!node->children.empty()) {
        expect_op(",");
        if (skip_op("}")) break;
      }
      node->children.push_back(expression(true));
      expect_op(":");
      node->children.push_back(expression(true));
    }
    return node;
  }
  fail("unexpected " + describe(token));
}

ExprPtr Parser::literal(Value value, int line) {
  ExprPtr node = make_expr(Expr::Kind::Literal, line);
  node->value = std::move(value);
  return node;
}

ExprPtr Parser::postfix(ExprPtr node) {
  while (true) {
    const int line = current().line;
    if (skip_op(".")) {
      ExprPtr access = make_expr(Expr::Kind::GetAttr, line);
      if (current().kind == Token::Kind::Integer) {
        access->kind = Expr::Kind::GetItem;
        access->children.push_back(std::move(node));
        access->children.push_back(literal(current().number, line));
        advance();
      } else {
        access->name = expect_name();
        access->children.push_back(std::move(node));
      }
      node = std::move(access);
    } else if (skip_op("[")) {
      node = subscript(std::move(node), line);
    } else if (is_op("(")) {
      node = call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr Parser::subscript(ExprPtr object, int line) {
  ExprPtr parts[3];
  bool slice = false;
  int part = 0;
  while (!is_op("]")) {
    if (skip_op(":")) {
      slice = true;
      if (++part > 2) fail("too many ':' in a slice");
      continue;
    }
    if (parts[part]) fail("expected ':' or ']' in a subscript");
    parts[part] = tuple_expression(true);
  }
  advance();
  if (!slice) {
    if (!parts[0]) fail("empty subscript");
    ExprPtr node = make_expr(Expr::Kind::GetItem, line);
    node->children.push_back(std::move(object));
    node->children.push_back(std::move(parts[0]));
    return node;
  }
  ExprPtr node = make_expr(Expr::Kind::Slice, line);
  node->children.push_back(std::move(object));
  for (ExprPtr& p : parts)
    node->children.push_back(std::move(p));
  return node;
}

// Arguments in parentheses, appended to node's children and keywords.
void Parser::call_arguments(Expr& node) {
  expect_op("(");
  bool first = true;
  while (!skip_op(")")) {
    if (!first) {
      expect_op(",");
      if (skip_op(")")) break;
    }
    first = false;
    if (is_op("*") || is_op("**")) fail("'*' and '**' arguments are not supported");
    if (current().kind == Token::Kind::Name && peek().kind == Token::Kind::Operator &&
        peek().text == "=") {
      std::string name = current().text;
      advance();
      advance();
      node.keyword.emplace_back(std::move(name), expression(true));
    } else {
      if (!node.keyword.empty()) fail("a positional argument follows keyword arguments");
      node.children.push_back(expression(true));
    }
  }
}

ExprPtr Parser::call(ExprPtr callee) {
  ExprPtr node = make_expr(Expr::Kind::Call, current().line);
  node->children.push_back(std::move(callee));
  call_arguments(*node);
  return node;
}

ExprPtr Parser::filter_expression(ExprPtr node) {
  while (true) {
    if (is_op("|")) {
      node = filter_chain(std::move(node), true);
    } else if (is_name("is")) {
      node = test(std::move(node));
    } else if (is_op("(")) {
      node = call(std::move(node));
    } else {
      return node;
    }
  }
}

// One filter when `single`, else every "|name(args)" that follows.
ExprPtr Parser::filter_chain(ExprPtr input, bool single) {
  bool first = true;
  while (first || (!single && skip_op("|"))) {
    if (first && is_op("|")) advance();
    first = false;
    ExprPtr node = make_expr(Expr::Kind::Filter, current().line);
    node->name = expect_name();
    while (skip_op("."))
      node->name += "." + expect_name();
    node->children.push_back(std::move(input));
    if (is_op("(")) call_arguments(*node);
    input = std::move(node);
  }
  return input;
}

ExprPtr Parser::test(ExprPtr subject) {
  ExprPtr node = make_expr(Expr::Kind::Test, current().line);
  advance();  // is
  node->negated = skip_name("not");
  node->name = expect_name();
  while (skip_op("."))
    node->name += "." + expect_name();
  node->children.push_back(std::move(subject));
  const Token& token = current();
  if (is_op("(")) {
    call_arguments(*node);
  } else if ((token.kind == Token::Kind::Name || token.kind == Token::Kind::String ||
              token.kind == Token::Kind::Integer || token.kind == Token::Kind::Float ||
              is_op("[") || is_op("{")) &&
             !(is_name("else") || is_name("or") || is_name("and"))) {
    if (is_name("is")) fail("tests cannot be chained with 'is'");
    node->children.push_back(postfix(primary()));
  }
  return node;
}

}  // namespace quire::engine::jinja::detail
