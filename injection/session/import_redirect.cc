#include "injection/session/import_redirect.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cutrace::injection {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT;
constexpr uint32_t kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "RedirectImports knows the relocation types of x86_64 and aarch64 only"
#endif

struct Request {
  std::span<const ImportRedirect> redirects;
  uintptr_t skip[2];  // load bases of the defining object and of this one
  const char* needed;
  RedirectResult* out;
};

// glibc rewrites most d_ptr values of a writable .dynamic to addresses; the
// vDSO's and those of a read-only .dynamic stay offsets from the load base.
uintptr_t Address(ElfW(Addr) base, ElfW(Addr) value) {
  return value < base ? base + value : value;
}

// What one object's .dynamic says about its imports.
struct Dynamic {
  const char* strtab = nullptr;
  const ElfW(Sym)* symtab = nullptr;
  const ElfW(Rela)* jmprel = nullptr;
  size_t jmprel_bytes = 0;
  bool jmprel_is_rela = true;
  const ElfW(Rela)* rela = nullptr;
  size_t rela_bytes = 0;
  std::vector<ElfW(Xword)> needed;  // offsets into strtab
};

Dynamic ReadDynamic(ElfW(Addr) base, const ElfW(Dyn)* dyn) {
  Dynamic d;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
      case DT_STRTAB: d.strtab = reinterpret_cast<const char*>(Address(base, dyn->d_un.d_ptr)); break;
      case DT_SYMTAB: d.symtab = reinterpret_cast<const ElfW(Sym)*>(Address(base, dyn->d_un.d_ptr)); break;
      case DT_JMPREL: d.jmprel = reinterpret_cast<const ElfW(Rela)*>(Address(base, dyn->d_un.d_ptr)); break;
      case DT_PLTRELSZ: d.jmprel_bytes = dyn->d_un.d_val; break;
      case DT_PLTREL: d.jmprel_is_rela = dyn->d_un.d_val == DT_RELA; break;
      case DT_RELA: d.rela = reinterpret_cast<const ElfW(Rela)*>(Address(base, dyn->d_un.d_ptr)); break;
      case DT_RELASZ: d.rela_bytes = dyn->d_un.d_val; break;
      case DT_NEEDED: d.needed.push_back(dyn->d_un.d_val); break;
      default: break;
    }
  }
  return d;
}

// The page range [first, last) the loader made read-only, from PT_GNU_RELRO:
// it rounds both ends down, so a partial last page stays writable.
struct Relro {
  uintptr_t first = 0;
  uintptr_t last = 0;
};

// Writes one GOT slot; "" or why not.
std::string WriteSlot(void** slot, void* value, const Relro& relro) {
  const uintptr_t page_size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t page = reinterpret_cast<uintptr_t>(slot) & ~(page_size - 1);
  const bool read_only = page >= relro.first && page < relro.last;
  if (read_only && ::mprotect(reinterpret_cast<void*>(page), page_size, PROT_READ | PROT_WRITE) != 0) {
    return std::string("mprotect: ") + std::strerror(errno);
  }
  __atomic_store_n(slot, value, __ATOMIC_RELEASE);
  if (read_only) ::mprotect(reinterpret_cast<void*>(page), page_size, PROT_READ);
  return "";
}

int VisitObject(struct dl_phdr_info* info, size_t, void* arg) {
  auto* req = static_cast<Request*>(arg);
  const ElfW(Addr) base = info->dlpi_addr;
  if (base == req->skip[0] || base == req->skip[1]) return 0;
  const ElfW(Dyn)* dyn = nullptr;
  Relro relro;
  const uintptr_t page_mask = ~(static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)) - 1);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      relro.first = (base + ph.p_vaddr) & page_mask;
      relro.last = (base + ph.p_vaddr + ph.p_memsz) & page_mask;
    }
  }
  if (dyn == nullptr) return 0;
  Dynamic d = ReadDynamic(base, dyn);
  if (d.strtab == nullptr || d.symtab == nullptr) return 0;
  bool needs = false;
  for (ElfW(Xword) off : d.needed) needs = needs || std::strstr(d.strtab + off, req->needed) != nullptr;
  if (!needs) return 0;
  const std::string name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "(the program)";
  bool wrote = false;
  std::string failure;
  auto scan = [&](const ElfW(Rela)* table, size_t bytes) {
    if (table == nullptr) return;
    for (size_t k = 0; k < bytes / sizeof(ElfW(Rela)); ++k) {
      const ElfW(Rela)& r = table[k];
      const uint32_t type = static_cast<uint32_t>(ELF64_R_TYPE(r.r_info));
      if (type != kJumpSlot && type != kGlobDat) continue;
      const ElfW(Sym)& sym = d.symtab[ELF64_R_SYM(r.r_info)];
      if (sym.st_name == 0) continue;
      const char* name = d.strtab + sym.st_name;
      void* replacement = nullptr;
      for (const ImportRedirect& redirect : req->redirects)
        if (std::strcmp(name, redirect.symbol) == 0) replacement = redirect.replacement;
      if (replacement == nullptr) continue;
      void** slot = reinterpret_cast<void**>(base + r.r_offset);
      if (*slot == replacement) {
        wrote = true;
        continue;
      }
      if (std::string why = WriteSlot(slot, replacement, relro); !why.empty()) {
        failure = why;
        continue;
      }
      ++req->out->slots;
      wrote = true;
    }
  };
  if (d.jmprel_is_rela) scan(d.jmprel, d.jmprel_bytes);
  scan(d.rela, d.rela_bytes);
  if (wrote) req->out->objects.push_back(name);
  if (!failure.empty()) req->out->failed.push_back(name + ": " + failure);
  return 0;
}

uintptr_t BaseOf(const void* address) {
  Dl_info info;
  if (address == nullptr || ::dladdr(address, &info) == 0) return 0;
  return reinterpret_cast<uintptr_t>(info.dli_fbase);
}

}  // namespace

RedirectResult RedirectImports(std::span<const ImportRedirect> redirects, const void* definition,
                               const char* needed_substring) {
  RedirectResult result;
  Request req{redirects, {BaseOf(definition), BaseOf(reinterpret_cast<void*>(&BaseOf))},
              needed_substring, &result};
  // dladdr's dli_fbase is the mapping's start; dl_iterate_phdr gives the
  // load bias. They agree for the shared objects cutrace skips (linked at 0).
  ::dl_iterate_phdr(&VisitObject, &req);
  return result;
}

}  // namespace cutrace::injection
