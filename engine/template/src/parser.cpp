#include "parser.h"

#include "parser_state.h"
#include "runtime.h"

namespace quire::engine::jinja::detail {

ExprPtr make_expr(Expr::Kind kind, int line) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->line = line;
  return expr;
}

// Statements up to a block tag named in `ends` (left as the current
// token's name, in `end_tag`) or the end of the template.
Body Parser::statements(const std::set<std::string>& ends, std::string& end_tag) {
  Body body;
  while (true) {
    const Token& token = current();
    switch (token.kind) {
      case Token::Kind::End:
        if (!ends.empty()) {
          std::string expected;
          for (const std::string& end : ends)
            expected += (expected.empty() ? "'" : " or '") + end + "'";
          fail("unexpected end of template: expected " + expected);
        }
        return body;
      case Token::Kind::Text: {
        auto stmt = std::make_unique<Stmt>();
        stmt->kind = Stmt::Kind::Text;
        stmt->line = token.line;
        stmt->text = Text(token.text);
        body.statements.push_back(std::move(stmt));
        advance();
        break;
      }
      case Token::Kind::VariableBegin: {
        auto stmt = std::make_unique<Stmt>();
        stmt->kind = Stmt::Kind::Output;
        stmt->line = token.line;
        advance();
        stmt->expr = tuple_expression(true);
        if (current().kind != Token::Kind::VariableEnd)
          fail("expected '}}', found " + describe(current()));
        advance();
        body.statements.push_back(std::move(stmt));
        break;
      }
      case Token::Kind::BlockBegin: {
        advance();
        if (current().kind != Token::Kind::Name) fail("expected a statement name");
        if (ends.count(current().text) > 0) {
          end_tag = current().text;
          advance();
          return body;
        }
        body.statements.push_back(statement());
        break;
      }
      default:
        fail("unexpected " + describe(token));
    }
  }
}

StmtPtr Parser::statement() {
  const std::string tag = current().text;
  const int line = current().line;
  auto stmt = std::make_unique<Stmt>();
  stmt->line = line;
  advance();
  if (tag == "if") return if_statement(std::move(stmt));
  if (tag == "for") return for_statement(std::move(stmt));
  if (tag == "set") return set_statement(std::move(stmt));
  if (tag == "macro") return macro_statement(std::move(stmt));
  if (tag == "call") return call_statement(std::move(stmt));
  if (tag == "filter") return filter_statement(std::move(stmt));
  if (tag == "with") return with_statement(std::move(stmt));
  if (tag == "break" || tag == "continue") {
    if (loop_depth_ == 0) fail("'" + tag + "' outside a loop", line, "statement '" + tag + "'");
    stmt->kind = tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
    expect_block_end();
    return stmt;
  }
  if (tag == "generation") {
    // transformers' AssistantTracker marks assistant text; rendering is unchanged.
    expect_block_end();
    stmt->kind = Stmt::Kind::Scope;
    std::string end;
    stmt->body = statements({"endgeneration"}, end);
    expect_block_end();
    return stmt;
  }
  static const std::set<std::string> unsupported = {"include", "import",   "from",  "extends",
                                                    "block",   "do",       "print", "autoescape",
                                                    "trans",   "pluralize"};
  if (unsupported.count(tag) > 0)
    fail("'" + tag + "' is not supported", line, "statement '" + tag + "'");
  fail("unknown statement '" + tag + "'", line, "statement '" + tag + "'");
}

StmtPtr Parser::if_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::If;
  std::string end;
  ExprPtr condition = tuple_expression(false);
  while (true) {
    expect_block_end();
    Body body = statements({"elif", "else", "endif"}, end);
    stmt->branches.emplace_back(std::move(condition), std::move(body));
    if (end == "elif") {
      condition = tuple_expression(false);
      continue;
    }
    if (end == "else") {
      expect_block_end();
      stmt->else_body = statements({"endif"}, end);
    }
    expect_block_end();
    return stmt;
  }
}

StmtPtr Parser::for_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::For;
  stmt->target = assign_target(false);
  if (!skip_name("in")) fail("expected 'in' in the for loop", 0, "statement 'for'");
  stmt->expr = tuple_expression(false);
  if (skip_name("if")) stmt->condition = expression(true);
  if (is_name("recursive")) fail("recursive loops are not supported", 0, "statement 'for'");
  expect_block_end();
  std::string end;
  ++loop_depth_;
  stmt->body = statements({"else", "endfor"}, end);
  --loop_depth_;
  if (end == "else") {
    expect_block_end();
    // break and continue in the else branch belong to an enclosing loop.
    const int saved = loop_depth_;
    stmt->else_body = statements({"endfor"}, end);
    loop_depth_ = saved;
  }
  expect_block_end();
  return stmt;
}

Target Parser::assign_target(bool allow_attribute) {
  Target target;
  const bool parenthesized = skip_op("(");
  target.names.push_back(expect_name());
  if (allow_attribute && skip_op(".")) {
    target.attribute = expect_name();
    return target;
  }
  while (skip_op(",")) {
    target.unpack = true;
    if (current().kind != Token::Kind::Name) break;
    target.names.push_back(expect_name());
  }
  if (parenthesized) {
    expect_op(")");
    target.unpack = true;
  }
  return target;
}

StmtPtr Parser::set_statement(StmtPtr stmt) {
  stmt->target = assign_target(true);
  if (skip_op("=")) {
    stmt->kind = Stmt::Kind::Set;
    stmt->expr = tuple_expression(true);
    expect_block_end();
    return stmt;
  }
  stmt->kind = Stmt::Kind::SetBlock;
  if (is_op("|")) stmt->filter = filter_chain(nullptr);
  expect_block_end();
  std::string end;
  stmt->body = statements({"endset"}, end);
  expect_block_end();
  return stmt;
}

void Parser::parameters(Stmt& stmt) {
  expect_op("(");
  while (!skip_op(")")) {
    if (!stmt.parameters.empty()) expect_op(",");
    if (skip_op(")")) break;
    std::string name = expect_name();
    ExprPtr fallback;
    if (skip_op("=")) fallback = expression(true);
    stmt.parameters.emplace_back(std::move(name), std::move(fallback));
  }
}

StmtPtr Parser::macro_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::Macro;
  stmt->name = expect_name();
  parameters(*stmt);
  expect_block_end();
  std::string end;
  const int saved = loop_depth_;
  loop_depth_ = 0;
  stmt->body = statements({"endmacro"}, end);
  loop_depth_ = saved;
  expect_block_end();
  return stmt;
}

StmtPtr Parser::call_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::CallBlock;
  if (is_op("(")) parameters(*stmt);
  stmt->expr = expression(true);
  if (stmt->expr->kind != Expr::Kind::Call) fail("expected a call", 0, "statement 'call'");
  expect_block_end();
  std::string end;
  const int saved = loop_depth_;
  loop_depth_ = 0;
  stmt->body = statements({"endcall"}, end);
  loop_depth_ = saved;
  expect_block_end();
  return stmt;
}

StmtPtr Parser::filter_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::FilterBlock;
  stmt->filter = filter_chain(nullptr, false);
  expect_block_end();
  std::string end;
  stmt->body = statements({"endfilter"}, end);
  expect_block_end();
  return stmt;
}

StmtPtr Parser::with_statement(StmtPtr stmt) {
  stmt->kind = Stmt::Kind::With;
  while (current().kind != Token::Kind::BlockEnd) {
    if (!stmt->assignments.empty()) expect_op(",");
    Target target = assign_target(false);
    expect_op("=");
    stmt->assignments.emplace_back(std::move(target), expression(true));
  }
  expect_block_end();
  std::string end;
  stmt->body = statements({"endwith"}, end);
  expect_block_end();
  return stmt;
}

namespace {

// jinja2 rejects a filter or test name it does not know when it compiles the
// template, except inside if statements and conditional expressions (its
// "soft" frames), where the error waits until the filter runs.
void check_names(const Expr& expr, bool soft) {
  soft = soft || expr.kind == Expr::Kind::Conditional;
  if (!soft && expr.kind == Expr::Kind::Filter && filter_status(expr.name) == NameStatus::Unknown)
    throw TemplateError("no filter named '" + expr.name + "'", expr.line,
                        "filter '" + expr.name + "'");
  if (!soft && expr.kind == Expr::Kind::Test && test_status(expr.name) == NameStatus::Unknown)
    throw TemplateError("no test named '" + expr.name + "'", expr.line, "test '" + expr.name + "'");
  for (const auto& child : expr.children) {
    if (child) check_names(*child, soft);
  }
  for (const auto& [name, value] : expr.keyword)
    check_names(*value, soft);
}

void check_names(const Body& body, bool soft) {
  for (const auto& stmt : body.statements) {
    for (const ExprPtr* expr : {&stmt->expr, &stmt->condition, &stmt->filter}) {
      if (*expr) check_names(**expr, soft || stmt->kind == Stmt::Kind::If);
    }
    for (const auto& [name, value] : stmt->parameters) {
      if (value) check_names(*value, false);
    }
    for (const auto& [target, value] : stmt->assignments)
      check_names(*value, soft);
    for (const auto& [condition, branch] : stmt->branches) {
      check_names(*condition, true);
      check_names(branch, true);
    }
    const bool inner_soft =
        soft && (stmt->kind == Stmt::Kind::If || stmt->kind == Stmt::Kind::Set ||
                 stmt->kind == Stmt::Kind::Scope);
    check_names(stmt->body, inner_soft);
    check_names(stmt->else_body, stmt->kind == Stmt::Kind::If || inner_soft);
  }
}

}  // namespace

}  // namespace quire::engine::jinja::detail

namespace quire::engine::jinja {

std::shared_ptr<const ast::Body> parse_template(std::string_view source) {
  std::shared_ptr<const ast::Body> body = detail::Parser(tokenize(source)).run();
  detail::check_names(*body, false);
  return body;
}

}  // namespace quire::engine::jinja
