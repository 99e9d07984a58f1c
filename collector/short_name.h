// Short names for demangled C++ kernel names, the way nsys's short names
// read: template arguments and parameter lists elided, the return type
// dropped, so
//
//   void at::native::vectorized_elementwise_kernel<4, at::native::Foo<float>,
//       at::detail::Array<char*, 3> >(int, at::native::Foo<float>, ...)
//
// becomes `at::native::vectorized_elementwise_kernel<…>(…)`. Used by the
// CLI's tables and by the OpenMetrics label values (a bounded `name` label),
// so it lives here, free of any dependency. Pure; call from any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cutrace {

// The short form of `name`. A name that does not look like a demangled
// function signature (no parameter list right after an identifier or a
// template argument list: a C kernel name, "Memcpy HtoD (Device -> Host)",
// an NVTX range) is returned unchanged, as is one whose brackets do not
// balance. `(anonymous namespace)` and `operator()` are kept as written;
// trailing cv/ref qualifiers (" const") are dropped, other trailing text
// (" [counted]") is kept.
std::string ShortName(std::string_view name);

// The first `digits` hex digits of the 64-bit FNV-1a hash of `full`: the
// tag that tells apart full names sharing a short name, the same in every
// report and every run.
std::string NameTag(std::string_view full, int digits);

// Short names for a set of full names, made unique: where several distinct
// full names share one short name, each gets " #" and its NameTag (4 hex
// digits; 8, 12 or 16 where 4 do not tell those names apart). Names whose
// short form is unique keep it as is. The map is full name -> shown name.
std::map<std::string, std::string> UniqueShortNames(const std::vector<std::string>& names);

}  // namespace cutrace
