#include "injection/clock.h"

namespace cutrace::injection {

uint64_t MonotonicTimestamp() { return MonotonicNs(); }

}  // namespace cutrace::injection
