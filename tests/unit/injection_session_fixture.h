// Test fixture for the injection Session tests: a FakeCupti
// (injection_fake_cupti.h) behind a real Session writing into a temporary
// directory, and helpers that build synthetic CUDA 13 activity records.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "injection/session/session.h"
#include "tests/unit/injection_fake_cupti.h"
#include "tests/unit/temp_dir.h"

namespace cutrace::injection {

using ::cutrace::injection::testing::BufferWriter;
using ::cutrace::injection::testing::FakeCupti;

template <typename T>
T Zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof(t));
  t.kind = kind;
  return t;
}

inline CUpti_ActivityKernel10 Kernel(const char* name, uint64_t start, uint64_t end, uint32_t corr) {
  auto k = Zeroed<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = name;
  k.start = start;
  k.end = end;
  k.correlationId = corr;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.gridX = k.gridY = k.gridZ = 1;
  k.blockX = 128;
  k.blockY = k.blockZ = 1;
  k.clusterX = k.clusterY = k.clusterZ = 1;
  return k;
}

inline CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                      uint32_t corr) {
  auto a = Zeroed<CUpti_ActivityAPI>(kind);
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.threadId = 4242;
  a.correlationId = corr;
  return a;
}

inline CUpti_ActivityMarker2 Marker(uint32_t flags, uint32_t id, uint64_t t, const char* name,
                             const char* domain) {
  auto m = Zeroed<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.id = id;
  m.timestamp = t;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 1;
  m.objectId.pt.threadId = 4242;
  m.name = name;
  m.domain = domain;
  return m;
}

// Sets environment variables for one test (the session reads CUTRACE_MODE
// and the production variables from the process environment).
class ScopedEnv {
 public:
  ScopedEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (auto& [k, v] : vars_) ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~ScopedEnv() {
    for (auto& [k, v] : vars_) ::unsetenv(k.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

class InjectionSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.empty()) << "no temporary directory";
    auto fake = std::make_unique<FakeCupti>();
    fake_ = fake.get();
    fake_owner_ = std::move(fake);
  }
  void TearDown() override { session_.reset(); }
  Config MakeConfig() {
    Config c;
    c.output = dir_ + "/";
    c.buffer_count = 4;
    c.buffer_bytes = 1u << 20;
    c.flush_timeout_ms = 10000;
    return c;
  }
  Status StartSession(Config c) {
    session_ = std::make_unique<Session>(std::move(c), [](const char* name) {
      return GetProcessEnv(name);
    });
    Status started = session_->Start(std::move(fake_owner_));
    // Start runs inside cuInit; from here on CUDA runs (FakeCupti::cuda_running).
    if (started.ok() && fake_ != nullptr) fake_->cuda_running = true;
    return started;
  }
  // A session recording `list` (CUTRACE_KINDS words), started.
  Status StartWithKinds(const char* list) {
    Config c = MakeConfig();
    std::string error;
    c.kinds = *ParseKinds(list, &error);
    return StartSession(std::move(c));
  }
  // The activity kinds the session enabled, each once however often.
  std::set<CUpti_ActivityKind> EnabledKinds() const {
    return {fake_->enabled_kinds.begin(), fake_->enabled_kinds.end()};
  }
  std::vector<std::string> Files() const {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir_.c_str());
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }
  // Requests a buffer the way CUPTI does, fills it, and completes it.
  template <typename Fill>
  void DeliverBuffer(Fill fill) {
    uint8_t* buffer = nullptr;
    size_t size = 0, max_records = 99;
    fake_->requested(&buffer, &size, &max_records);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(max_records, 0u);
    BufferWriter w(buffer, size);
    fill(w);
    fake_->completed(nullptr, 0, buffer, size, w.used());
  }

  cutrace::testing::TempDir tmp_;
  std::string dir_ = tmp_.path();
  FakeCupti* fake_ = nullptr;
  std::unique_ptr<FakeCupti> fake_owner_;
  std::unique_ptr<Session> session_;
};

}  // namespace cutrace::injection
