/* A stand-in libcupti of another version, for the fail-open matrix
 * (tests/gpu/failopen.py, case cupti_other_version): it exports every entry
 * point cutrace resolves, so loading succeeds, and cuptiGetVersion reports
 * FAKE_CUPTI_API_VERSION (default 120800, CUDA 12.8's CUPTI). Every other
 * call fails with CUPTI_ERROR_NOT_INITIALIZED (15): cutrace must stop at the
 * version check with one line and never call them. Plain C, no CUDA headers. */
#include <stdint.h>
#include <stdlib.h>

#define NOT_INITIALIZED 15

int cuptiGetVersion(uint32_t* version) {
  const char* v = getenv("FAKE_CUPTI_API_VERSION");
  *version = v ? (uint32_t)strtoul(v, NULL, 10) : 120800u;
  return 0;
}

int cuptiSubscribe(void) { return NOT_INITIALIZED; }
int cuptiSubscribe_v2(void) { return NOT_INITIALIZED; }
int cuptiUnsubscribe(void) { return NOT_INITIALIZED; }
int cuptiActivityRegisterCallbacks(void) { return NOT_INITIALIZED; }
int cuptiActivityEnable(void) { return NOT_INITIALIZED; }
int cuptiActivityGetNextRecord(void) { return NOT_INITIALIZED; }
int cuptiActivityGetNumDroppedRecords(void) { return NOT_INITIALIZED; }
int cuptiActivityFlushAll(void) { return NOT_INITIALIZED; }
int cuptiGetCallbackName(void) { return NOT_INITIALIZED; }
int cuptiGetTimestamp(void) { return NOT_INITIALIZED; }
