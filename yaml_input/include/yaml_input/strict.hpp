// Strict reading of a YAML input file. yaml-cpp accepts what a user rarely means: a second document
// after `---` is dropped by YAML::Load, an empty file reads as null, and a mapping key given twice is
// kept twice with lookups finding the first. Each parser turns these into its own error type.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace fetta::yaml_input {

// Why a text is not one usable document. line is 1-based, 0 when no line applies.
struct Problem {
  int line = 0;
  std::string field;    // dotted path of the key concerned, or "<file>" / "<syntax>"
  std::string message;  // what is wrong and what is allowed
};

// The root of the one document in `text`, or the problem: a syntax error, no document (an empty
// file or only comments), or more than one document.
struct Document {
  YAML::Node root;
  std::optional<Problem> problem;
};
Document load_one_document(const std::string& text);

// The first mapping key (in document order) that appears twice in its mapping, anywhere in the tree.
std::optional<Problem> find_duplicate_key(const YAML::Node& root);

// "file:line: field: message" (without the line when there is none): the form of every input error.
std::string format(const Problem& p, const std::string& file);

// 1-based line of a node, or `fallback` when yaml-cpp has no mark for it.
int line_of(const YAML::Node& n, int fallback = 0);

// Where two texts (two versions of one input file) first differ, line by line: the 1-based line
// and that line of each, "(end of file)" for a text that ends before the other. nullopt: equal.
struct LineDifference {
  int line = 0;
  std::string a, b;
};
std::optional<LineDifference> first_difference(const std::string& a, const std::string& b);

}  // namespace fetta::yaml_input
