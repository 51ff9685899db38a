#pragma once

// The parsed form of a template: expressions and statements, each with the
// line it starts on (for error messages).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "quire/engine/template/value.h"

namespace quire::engine::jinja::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,  // value
    Name,     // name
    List,     // children
    Tuple,    // children
    Dict,     // children: key, value, key, value...
    GetAttr,  // children[0].name
    GetItem,  // children[0][children[1]]
    Slice,    // children[0][children[1]:children[2]:children[3]], each may be null
    Call,     // children[0](children[1..], keyword)
    Filter,   // name: children[0]|name(children[1..], keyword); children[0] null in filter blocks
    Test,     // name: children[0] is name(children[1..], keyword); negated
    Negate,   // -children[0]
    Plus,     // +children[0]
    Not,      // not children[0]
    Binary,   // children[0] op children[1]: + - * / // % ** ~
    And,      // children[0] and children[1]
    Or,       // children[0] or children[1]
    Compare,  // children[0] ops[0] children[1] ops[1] children[2]...
    Conditional,  // children[1] if children[0] else children[2] (may be null)
  };

  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  std::vector<std::string> ops;
  bool negated = false;
};

// Where an assignment goes: a name, a namespace attribute, or a tuple of names.
struct Target {
  std::vector<std::string> names;  // several when unpacking
  std::string attribute;           // set when assigning names[0].attribute
  bool unpack = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Body {
  std::vector<StmtPtr> statements;
};

struct Stmt {
  enum class Kind {
    Text,         // text
    Output,       // {{ expr }}
    If,           // branches (condition, body); else_body
    For,          // target in expr [if condition]: body; else_body
    Set,          // target = expr
    SetBlock,     // target = rendered body, through filter if any
    Macro,        // name(parameters): body
    CallBlock,    // expr (a call) with caller(parameters): body
    FilterBlock,  // filter (a Filter chain whose innermost input is null): body
    With,         // assignments; body
    Break,
    Continue,
    Scope,  // body rendered as is (generation blocks)
  };

  Kind kind;
  int line = 0;
  Text text;
  ExprPtr expr;
  ExprPtr condition;
  ExprPtr filter;
  Target target;
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // default may be null
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::pair<Target, ExprPtr>> assignments;
  Body body;
  Body else_body;
};

}  // namespace quire::engine::jinja::ast
