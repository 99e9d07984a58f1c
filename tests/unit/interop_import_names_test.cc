// Kineto's activity names read back into CUPTI's enums (interop/kineto/kineto_names.h),
// including the malformed names a hand-edited or foreign trace may carry.
#include <gtest/gtest.h>

#include "interop/kineto/kineto_names.h"

namespace cutrace::interop {
namespace {

MemcpyRecord Memcpy(std::string_view name, bool* ok) {
  MemcpyRecord r;
  *ok = ParseMemcpyName(name, &r);
  return r;
}

TEST(KinetoNames, MemcpyNames) {
  bool ok = false;
  MemcpyRecord r = Memcpy("Memcpy HtoD (Pageable -> Device)", &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(r.copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(r.src_kind, MemoryKind::kPageable);
  EXPECT_EQ(r.dst_kind, MemoryKind::kDevice);
  r = Memcpy("Memcpy DtoD (Device Static -> Managed Static)", &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(r.copy_kind, CopyKind::kDtoD);
  EXPECT_EQ(r.src_kind, MemoryKind::kDeviceStatic);
  EXPECT_EQ(r.dst_kind, MemoryKind::kManagedStatic);
  r = Memcpy("Memcpy PtoP", &ok);  // kind without memory kinds
  EXPECT_TRUE(ok);
  EXPECT_EQ(r.copy_kind, CopyKind::kPtoP);
  EXPECT_EQ(r.src_kind, MemoryKind::kUnknown);
  r = Memcpy("Memcpy HtoD (Pinned)", &ok);  // no arrow: kinds unknown
  EXPECT_TRUE(ok);
  EXPECT_EQ(r.src_kind, MemoryKind::kUnknown);
  EXPECT_EQ(r.dst_kind, MemoryKind::kUnknown);
  for (std::string_view bad : {"", "Memcpy", "Memcpy ", "memcpy HtoD", "Memcpy XtoY (a -> b)",
                               "Memcpy HtoD( -> )", "Memcpy HtoD ( -> )"}) {
    r = Memcpy(bad, &ok);
    EXPECT_EQ(r.copy_kind == CopyKind::kUnknown, !ok) << bad;
  }
  EXPECT_FALSE(Memcpy("Memcpy XtoY (Pageable -> Device)", &ok).copy_kind != CopyKind::kUnknown);
  EXPECT_FALSE(ok);
  r = Memcpy("Memcpy HtoD ( -> )", &ok);
  EXPECT_EQ(r.src_kind, MemoryKind::kUnknown);
}

TEST(KinetoNames, MemsetAndSyncNames) {
  EXPECT_EQ(ParseMemsetName("Memset (Device)"), MemoryKind::kDevice);
  EXPECT_EQ(ParseMemsetName("Memset (Managed)"), MemoryKind::kManaged);
  EXPECT_EQ(ParseMemsetName("Memset (Unknown)"), MemoryKind::kUnknown);
  EXPECT_EQ(ParseMemsetName("Memset ("), MemoryKind::kUnknown);
  EXPECT_EQ(ParseMemsetName(""), MemoryKind::kUnknown);
  EXPECT_EQ(ParseSyncName("Stream Sync"), SyncKind::kStreamSynchronize);
  EXPECT_EQ(ParseSyncName("Event Sync"), SyncKind::kEventSynchronize);
  EXPECT_EQ(ParseSyncName("Stream Wait Event"), SyncKind::kStreamWaitEvent);
  EXPECT_EQ(ParseSyncName("Context Sync"), SyncKind::kContextSynchronize);
  EXPECT_EQ(ParseSyncName("Unknown Sync"), SyncKind::kUnknown);
}

}  // namespace
}  // namespace cutrace::interop
