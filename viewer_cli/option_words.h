// Options that take one of a few words (`--format table|csv|json`): the one
// validator every such option uses, so that --help shows the words as the
// option's type and a wrong word gets one plain line,
//
//   --format: 'xml' is not one of table, csv, json
//
// (RunCli prefixes "cutrace: "), never CLI11's `{csv->1,...}` maps. Words
// match case-insensitively.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace cutrace::cli {

namespace internal {

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline std::string JoinWords(const std::vector<std::string>& words, const char* between) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) out += (i ? between : "") + words[i];
  return out;
}

// Validates the word and rewrites it to `values[i]` (what the option's
// target parses).
inline CLI::Validator WordValidator(std::vector<std::string> words,
                                    std::vector<std::string> values) {
  const std::string list = JoinWords(words, ", ");
  return CLI::Validator(
      [words, values, list](std::string& input) -> std::string {
        const std::string typed = Lower(input);
        for (size_t i = 0; i < words.size(); ++i) {
          if (typed == words[i]) {
            input = values[i];
            return "";
          }
        }
        return "'" + input + "' is not one of " + list;
      },
      "", "");
}

}  // namespace internal

// `option` takes one of `words` into an enum target.
template <typename E>
CLI::Option* EnumWords(CLI::Option* option, const std::vector<std::pair<std::string, E>>& words) {
  std::vector<std::string> names, values;
  for (const auto& [word, value] : words) {
    names.push_back(word);
    values.push_back(std::to_string(static_cast<long long>(value)));
  }
  option->type_name(internal::JoinWords(names, "|"));
  return option->transform(internal::WordValidator(names, std::move(values)));
}

// `option` takes one of `words` into a string target (lower-cased).
inline CLI::Option* StringWords(CLI::Option* option, const std::vector<std::string>& words) {
  option->type_name(internal::JoinWords(words, "|"));
  return option->transform(internal::WordValidator(words, words));
}

}  // namespace cutrace::cli
