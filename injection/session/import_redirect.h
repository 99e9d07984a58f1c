// RedirectImports: points the calls that loaded objects make to some
// imported functions at replacements, by rewriting the objects' GOT slots
// for it (the R_*_JUMP_SLOT and R_*_GLOB_DAT relocations the dynamic linker
// filled in). cutrace uses it for exactly one purpose: to be told, before it
// happens, that the program's own CUPTI client (torch.profiler's Kineto) is
// registering its activity buffer callbacks, which replace cutrace's
// process-wide (session.h, YieldActivity).
//
// Only objects that list a library whose name contains `needed_substring`
// among their DT_NEEDED entries are looked at, and never the object that
// defines the functions or the one this code is in. One pass over the loaded
// objects serves every redirect. Objects loaded later are
// not affected, nor calls made through a pointer from dlsym(). A slot that
// sits in a read-only (RELRO) page is written after an mprotect() of that
// page and the page is made read-only again.
//
// Threads: call it from one thread at a time; a slot is written with one
// aligned store, so a concurrent caller of the function sees either the old
// or the new target.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace cutrace::injection {

struct ImportRedirect {
  const char* symbol;
  void* replacement;
};

struct RedirectResult {
  size_t slots = 0;                  // GOT slots now pointing at a replacement
  std::vector<std::string> objects;  // the objects they belong to (names as the loader has them)
  std::vector<std::string> failed;   // objects with a slot that could not be written, with why
};

RedirectResult RedirectImports(std::span<const ImportRedirect> redirects, const void* definition,
                               const char* needed_substring);

}  // namespace cutrace::injection
