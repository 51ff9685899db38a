#include "parser.h"

#include <set>

#include "lexer.h"
#include "quire/engine/template/error.h"
#include "runtime.h"

namespace quire::engine::jinja {
namespace {

using ast::Body;
using ast::Expr;
using ast::ExprPtr;
using ast::Stmt;
using ast::StmtPtr;
using ast::Target;

ExprPtr make(Expr::Kind kind, int line) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->line = line;
  return expr;
}

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
  Body statements(const std::set<std::string>& ends, std::string& end_tag) {
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

  StmtPtr statement() {
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

  StmtPtr if_statement(StmtPtr stmt) {
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

  StmtPtr for_statement(StmtPtr stmt) {
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

  Target assign_target(bool allow_attribute) {
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

  StmtPtr set_statement(StmtPtr stmt) {
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

  void parameters(Stmt& stmt) {
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

  StmtPtr macro_statement(StmtPtr stmt) {
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

  StmtPtr call_statement(StmtPtr stmt) {
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

  StmtPtr filter_statement(StmtPtr stmt) {
    stmt->kind = Stmt::Kind::FilterBlock;
    stmt->filter = filter_chain(nullptr, false);
    expect_block_end();
    std::string end;
    stmt->body = statements({"endfilter"}, end);
    expect_block_end();
    return stmt;
  }

  StmtPtr with_statement(StmtPtr stmt) {
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

  // ---- expressions ----

  // Comma-separated expressions become a tuple.
  ExprPtr tuple_expression(bool with_conditional) {
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
    ExprPtr tuple = make(Expr::Kind::Tuple, line);
    tuple->children = std::move(items);
    return tuple;
  }

  bool at_expression_end() const {
    const Token& token = current();
    return token.kind == Token::Kind::VariableEnd || token.kind == Token::Kind::BlockEnd ||
           (token.kind == Token::Kind::Operator && token.text == ")") ||
           (token.kind == Token::Kind::Name && (token.text == "in" || token.text == "if"));
  }

  ExprPtr expression(bool with_conditional) {
    ExprPtr expr = or_expression();
    if (!with_conditional) return expr;
    while (is_name("if")) {
      const int line = current().line;
      advance();
      ExprPtr condition = or_expression();
      ExprPtr otherwise;
      if (skip_name("else")) otherwise = expression(true);
      ExprPtr conditional = make(Expr::Kind::Conditional, line);
      conditional->children.push_back(std::move(condition));
      conditional->children.push_back(std::move(expr));
      conditional->children.push_back(std::move(otherwise));
      expr = std::move(conditional);
    }
    return expr;
  }

  ExprPtr binary(Expr::Kind kind, ExprPtr left, ExprPtr right, int line,
                 const std::string& op = {}) {
    ExprPtr node = make(kind, line);
    node->name = op;
    node->children.push_back(std::move(left));
    node->children.push_back(std::move(right));
    return node;
  }

  ExprPtr or_expression() {
    ExprPtr left = and_expression();
    while (is_name("or")) {
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::Or, std::move(left), and_expression(), line);
    }
    return left;
  }

  ExprPtr and_expression() {
    ExprPtr left = not_expression();
    while (is_name("and")) {
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::And, std::move(left), not_expression(), line);
    }
    return left;
  }

  ExprPtr not_expression() {
    if (is_name("not")) {
      ExprPtr node = make(Expr::Kind::Not, current().line);
      advance();
      node->children.push_back(not_expression());
      return node;
    }
    return compare_expression();
  }

  ExprPtr compare_expression() {
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
        node = make(Expr::Kind::Compare, line);
        node->children.push_back(std::move(first));
      }
      node->ops.push_back(op);
      node->children.push_back(math1());
    }
    return node ? std::move(node) : std::move(first);
  }

  ExprPtr math1() {
    ExprPtr left = concat();
    while (is_op("+") || is_op("-")) {
      const std::string op = current().text;
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::Binary, std::move(left), concat(), line, op);
    }
    return left;
  }

  ExprPtr concat() {
    ExprPtr left = math2();
    while (is_op("~")) {
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::Binary, std::move(left), math2(), line, "~");
    }
    return left;
  }

  ExprPtr math2() {
    ExprPtr left = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const std::string op = current().text;
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::Binary, std::move(left), power(), line, op);
    }
    return left;
  }

  ExprPtr power() {
    ExprPtr left = unary(true);
    while (is_op("**")) {
      const int line = current().line;
      advance();
      left = binary(Expr::Kind::Binary, std::move(left), unary(true), line, "**");
    }
    return left;
  }

  ExprPtr unary(bool with_filter) {
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      node = make(is_op("-") ? Expr::Kind::Negate : Expr::Kind::Plus, current().line);
      advance();
      node->children.push_back(unary(false));
    } else {
      node = primary();
    }
    node = postfix(std::move(node));
    if (with_filter) node = filter_expression(std::move(node));
    return node;
  }

  ExprPtr primary() {
    const Token& token = current();
    const int line = token.line;
    if (token.kind == Token::Kind::Name) {
      const std::string name = token.text;
      advance();
      if (name == "true" || name == "True") return literal(Value(true), line);
      if (name == "false" || name == "False") return literal(Value(false), line);
      if (name == "none" || name == "None") return literal(Value::none(), line);
      ExprPtr node = make(Expr::Kind::Name, line);
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
        ExprPtr node = make(Expr::Kind::Tuple, line);
        return node;
      }
      ExprPtr inner = tuple_expression(true);
      expect_op(")");
      return inner;
    }
    if (skip_op("[")) {
      ExprPtr node = make(Expr::Kind::List, line);
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
      ExprPtr node = make(Expr::Kind::Dict, line);
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

  ExprPtr literal(Value value, int line) {
    ExprPtr node = make(Expr::Kind::Literal, line);
    node->value = std::move(value);
    return node;
  }

  ExprPtr postfix(ExprPtr node) {
    while (true) {
      const int line = current().line;
      if (skip_op(".")) {
        ExprPtr access = make(Expr::Kind::GetAttr, line);
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

  ExprPtr subscript(ExprPtr object, int line) {
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
      ExprPtr node = make(Expr::Kind::GetItem, line);
      node->children.push_back(std::move(object));
      node->children.push_back(std::move(parts[0]));
      return node;
    }
    ExprPtr node = make(Expr::Kind::Slice, line);
    node->children.push_back(std::move(object));
    for (ExprPtr& p : parts)
      node->children.push_back(std::move(p));
    return node;
  }

  // Arguments in parentheses, appended to node's children and keywords.
  void call_arguments(Expr& node) {
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

  ExprPtr call(ExprPtr callee) {
    ExprPtr node = make(Expr::Kind::Call, current().line);
    node->children.push_back(std::move(callee));
    call_arguments(*node);
    return node;
  }

  ExprPtr filter_expression(ExprPtr node) {
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
  ExprPtr filter_chain(ExprPtr input, bool single = false) {
    bool first = true;
    while (first || (!single && skip_op("|"))) {
      if (first && is_op("|")) advance();
      first = false;
      ExprPtr node = make(Expr::Kind::Filter, current().line);
      node->name = expect_name();
      while (skip_op("."))
        node->name += "." + expect_name();
      node->children.push_back(std::move(input));
      if (is_op("(")) call_arguments(*node);
      input = std::move(node);
    }
    return input;
  }

  ExprPtr test(ExprPtr subject) {
    ExprPtr node = make(Expr::Kind::Test, current().line);
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

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int loop_depth_ = 0;
};

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

std::shared_ptr<const ast::Body> parse_template(std::string_view source) {
  std::shared_ptr<const Body> body = Parser(tokenize(source)).run();
  check_names(*body, false);
  return body;
}

}  // namespace quire::engine::jinja
