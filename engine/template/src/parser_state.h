#pragma once

// Private to the parser: its state and its grammar, defined in parser.cpp
// (statements) and parser_expressions.cpp (expressions).

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ast.h"
#include "lexer.h"
#include "quire/engine/template/error.h"

namespace quire::engine::jinja::detail {

using ast::Body;
using ast::Expr;
using ast::ExprPtr;
using ast::Stmt;
using ast::StmtPtr;
using ast::Target;

ExprPtr make_expr(Expr::Kind kind, int line);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  std::shared_ptr<const Body> run() {
    auto body = std::make_shared<Body>();
    std::string end_tag;
    *body = statements({}, end_tag);
    return body;
  }

 private:
  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(std::size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  void advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }

  [[noreturn]] void fail(const std::string& problem, int line = 0,
                         const std::string& construct = "syntax") const {
    throw TemplateError(problem, line > 0 ? line : current().line, construct);
  }

  bool is_op(const char* op) const {
    return current().kind == Token::Kind::Operator && current().text == op;
  }
  bool is_name(const char* name) const {
    return current().kind == Token::Kind::Name && current().text == name;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', found " + describe(current()));
  }
  std::string expect_name() {
    if (current().kind != Token::Kind::Name) fail("expected a name, found " + describe(current()));
    std::string name = current().text;
    advance();
    return name;
  }
  void expect_block_end() {
    if (current().kind != Token::Kind::BlockEnd)
      fail("expected the end of the statement, found " + describe(current()));
    advance();
  }

  static std::string describe(const Token& token) {
    switch (token.kind) {
      case Token::Kind::Text:
        return "text";
      case Token::Kind::VariableBegin:
        return "'{{'";
      case Token::Kind::VariableEnd:
        return "'}}'";
      case Token::Kind::BlockBegin:
        return "'{%'";
      case Token::Kind::BlockEnd:
        return "'%}'";
      case Token::Kind::End:
        return "the end of the template";
      case Token::Kind::String:
        return "a string";
      default:
        return "'" + token.text + "'";
    }
  }

  // Statements up to a block tag named in `ends` (left as the current
  // token's name, in `end_tag`) or the end of the template.
  Body statements(const std::set<std::string>& ends, std::string& end_tag);
  StmtPtr statement();
  StmtPtr if_statement(StmtPtr stmt);
  StmtPtr for_statement(StmtPtr stmt);
  Target assign_target(bool allow_attribute);
  StmtPtr set_statement(StmtPtr stmt);
  void parameters(Stmt& stmt);
  StmtPtr macro_statement(StmtPtr stmt);
  StmtPtr call_statement(StmtPtr stmt);
  StmtPtr filter_statement(StmtPtr stmt);
  StmtPtr with_statement(StmtPtr stmt);
  // ---- expressions ----
  // Comma-separated expressions become a tuple.
  ExprPtr tuple_expression(bool with_conditional);
  bool at_expression_end() const;
  ExprPtr expression(bool with_conditional);
  ExprPtr binary(Expr::Kind kind, ExprPtr left, ExprPtr right, int line,
                 const std::string& op = {});
  ExprPtr or_expression();
  ExprPtr and_expression();
  ExprPtr not_expression();
  ExprPtr compare_expression();
  ExprPtr math1();
  ExprPtr concat();
  ExprPtr math2();
  ExprPtr power();
  ExprPtr unary(bool with_filter);
  ExprPtr primary();
  ExprPtr literal(Value value, int line);
  ExprPtr postfix(ExprPtr node);
  ExprPtr subscript(ExprPtr object, int line);
  // Arguments in parentheses, appended to node's children and keywords.
  void call_arguments(Expr& node);
  ExprPtr call(ExprPtr callee);
  ExprPtr filter_expression(ExprPtr node);
  // One filter when `single`, else every "|name(args)" that follows.
  ExprPtr filter_chain(ExprPtr input, bool single = false);
  ExprPtr test(ExprPtr subject);

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int loop_depth_ = 0;
};

}  // namespace quire::engine::jinja::detail
