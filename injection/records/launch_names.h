// LaunchNames: kernel names taken when a kernel is launched, by correlation
// id, for programs that unload modules.
//
// A kernel record's name is a pointer into CUPTI's memory, read when the
// buffer comes back. After a module is unloaded and another one loaded, the
// names CUPTI gives for the new module's launches were seen to be the old
// module's (module_reload on the H200: 200/100 launches instead of 150/150,
// even with a flush before every unload). The launch API callback's
// symbolName is the driver's own name for the function being launched, so
// once a program has unloaded a module, cutrace takes every launch's name
// there and the kernel record uses it. Programs that never unload pay
// nothing: the table does not exist until the first unload.
//
// A fixed table of kSlots entries indexed by correlation id; an entry packs
// (correlation id, interned name id) into one atomic word, so Put (launching
// threads) and Take (CUPTI's buffer thread) need no lock. A slot reused by a
// later launch before its record arrived only loses that name (the record
// then keeps CUPTI's).
//
// Threads: Activate once, from any thread; Put and Take from any thread
// after active() is seen true.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace cutrace::injection {

class LaunchNames {
 public:
  static constexpr uint32_t kSlots = 1u << 16;

  bool active() const { return active_.load(std::memory_order_acquire); }
  // Allocates the table (once); true if this call did.
  bool Activate();
  void Put(uint32_t correlation, uint32_t name_id);
  // The name id taken at the launch with this correlation id, or 0.
  uint32_t Take(uint32_t correlation) const;
  // Drops every name kept: CUPTI attached again (continuous mode's detach)
  // and may number its calls from 1 again. No launch may be under way.
  void Forget();

 private:
  static uint64_t Pack(uint32_t correlation, uint32_t name_id) {
    return (static_cast<uint64_t>(correlation) << 32) | name_id;
  }
  std::atomic<bool> active_{false};
  std::atomic<bool> activating_{false};
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;
};

}  // namespace cutrace::injection
