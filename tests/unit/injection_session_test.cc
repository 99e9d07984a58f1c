// The session end to end without a GPU: a fake CUPTI (injection_fake_cupti.h)
// drives the real buffer callbacks with synthetic records; the trace file
// the writer thread produces is read back with LoadTrace. Also the CUPTI
// call order, kind selection, and every start-up failure staying harmless.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "collector/trace_loader.h"
#include "injection/session.h"
#include "tests/unit/injection_fake_cupti.h"

namespace cutrace::injection {
namespace {

using testing::BufferWriter;
using testing::FakeCupti;

template <typename T>
T Zeroed(CUpti_ActivityKind kind) {
  T t;
  std::memset(&t, 0, sizeof(t));
  t.kind = kind;
  return t;
}

CUpti_ActivityKernel10 Kernel(const char* name, uint64_t start, uint64_t end, uint32_t corr) {
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

CUpti_ActivityAPI Api(CUpti_ActivityKind kind, uint32_t cbid, uint64_t start, uint64_t end,
                      uint32_t corr) {
  auto a = Zeroed<CUpti_ActivityAPI>(kind);
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.threadId = 4242;
  a.correlationId = corr;
  return a;
}

CUpti_ActivityMarker2 Marker(uint32_t flags, uint32_t id, uint64_t t, const char* name,
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

class InjectionSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cutrace-injection-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto fake = std::make_unique<FakeCupti>();
    fake_ = fake.get();
    fake_owner_ = std::move(fake);
  }
  void TearDown() override {
    session_.reset();
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
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
    return session_->Start(std::move(fake_owner_));
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

  std::string dir_;
  FakeCupti* fake_ = nullptr;
  std::unique_ptr<FakeCupti> fake_owner_;
  std::unique_ptr<Session> session_;
};

TEST_F(InjectionSessionTest, CuptiCallOrderAndKinds) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  const auto& f = *fake_;
  int version = f.IndexOf("cuptiGetVersion");
  int subscribe = f.IndexOf("cuptiSubscribe_v2:cutrace");
  int timestamp = f.IndexOf("cuptiActivityRegisterTimestampCallback");
  int callbacks = f.IndexOf("cuptiActivityRegisterCallbacks");
  int first_enable = f.IndexOf("cuptiActivityEnable:");
  ASSERT_GE(version, 0);
  EXPECT_LT(version, subscribe);
  EXPECT_LT(subscribe, timestamp);
  EXPECT_LT(timestamp, callbacks);
  EXPECT_LT(callbacks, first_enable);
  auto enabled = [&](CUpti_ActivityKind k) {
    return std::count(f.enabled_kinds.begin(), f.enabled_kinds.end(), k) == 1;
  };
  EXPECT_TRUE(enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_KERNEL)) << "KERNEL serializes kernels";
  for (auto k : {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                 CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA,
                 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
                 CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}) {
    EXPECT_TRUE(enabled(k)) << k;
  }
  // API records per call, not the whole domain.
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_FALSE(enabled(CUPTI_ACTIVITY_KIND_DRIVER));
  EXPECT_EQ(f.enabled_runtime_cbids,
            (std::set<uint32_t>{CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                                CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020}));
  EXPECT_EQ(f.enabled_driver_cbids, (std::set<uint32_t>{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}));
  EXPECT_EQ(f.IndexOf("cuptiActivityFlushAll"), -1);
  EXPECT_EQ(session_->clock(), ClockDomain::kMonotonic);
  EXPECT_NE(f.timestamp_fn, nullptr);
  EXPECT_EQ(Files().size(), 1u);
}

TEST_F(InjectionSessionTest, KindsSelectWhatIsEnabled) {
  Config c = MakeConfig();
  std::string error;
  c.kinds = *ParseKinds("kernel", &error);
  ASSERT_TRUE(StartSession(c).ok());
  std::set<CUpti_ActivityKind> kinds(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end());
  EXPECT_EQ(kinds, (std::set<CUpti_ActivityKind>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_DEVICE,
                                                 CUPTI_ACTIVITY_KIND_CONTEXT,
                                                 CUPTI_ACTIVITY_KIND_OVERHEAD}));
  EXPECT_TRUE(fake_->enabled_runtime_cbids.empty());
}

TEST_F(InjectionSessionTest, EndToEndIntoTraceFile) {
  fake_->dropped_per_buffer = 2;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  // Names live in a buffer the test frees before reading the trace back,
  // as CUPTI's do: nothing may point into it afterwards.
  auto names = std::make_unique<std::string[]>(3);
  names[0] = "_Z6vecAddPfS_S_i";
  names[1] = "_Z4tinyv";
  names[2] = "net";
  DeliverBuffer([&](BufferWriter& w) {
    auto dev = Zeroed<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
    dev.id = 0;
    dev.name = "NVIDIA H200";
    dev.numMultiprocessors = 132;
    w.Add(dev);
    auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
    ctx.contextId = 1;
    ctx.deviceId = 0;
    w.Add(ctx);
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 90, 95, 10));
    w.Add(Kernel(names[0].c_str(), 100, 200, 10));
    w.Add(Kernel(names[0].c_str(), 210, 300, 11));
    w.Add(Kernel(names[1].c_str(), 310, 320, 12));
    w.Add(Kernel(names[1].c_str(), 0, 330, 13));    // no start time: rejected
    w.Add(Kernel(names[1].c_str(), 400, 350, 14));  // inverted: rejected
    auto copy = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    copy.bytes = 4096;
    copy.start = 50;
    copy.end = 80;
    copy.streamId = 7;
    copy.contextId = 1;
    copy.correlationId = 9;
    w.Add(copy);
    auto peer = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    peer.bytes = 8192;
    peer.start = 400;
    peer.end = 450;
    peer.srcDeviceId = 0;
    peer.dstDeviceId = 1;
    w.Add(peer);
    auto set = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    set.bytes = 64;
    set.value = 7;
    set.start = 500;
    set.end = 510;
    w.Add(set);
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 60, "forward", names[2].c_str()));
    auto color = Zeroed<CUpti_ActivityMarkerData2>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
    color.id = 1;
    color.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    color.color = 0xFF76B900u;
    w.Add(color);
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 600, nullptr, names[2].c_str()));
    auto sync = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sync.start = 520;
    sync.end = 590;
    sync.contextId = 1;
    sync.streamId = 7;
    sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    w.Add(sync);
    auto overhead = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    overhead.start = 1000;
    overhead.end = 1250;
    w.Add(overhead);
    w.Add(Zeroed<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT));  // not ours: "other"
  });
  EXPECT_EQ(session_->pool()->available(), session_->pool()->capacity())
      << "the buffer goes back to the pool as soon as it is converted";
  names.reset();
  // CUPTI delivers what it still holds inside cuptiActivityFlushAll.
  fake_->on_flush = [&] {
    DeliverBuffer([](BufferWriter& w) { w.Add(Kernel("_Z5finalv", 700, 800, 20)); });
  };
  session_->Finalize("exit");
  EXPECT_EQ(fake_->flushes, 1);
  EXPECT_NE(fake_->IndexOf("cuptiActivityFlushAll:1"), -1) << "a forced flush";

  auto loaded = LoadTrace(session_->path());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const TraceData& t = loaded.value();
  EXPECT_TRUE(t.clean_shutdown());
  EXPECT_EQ(t.end->reason(), "exit");
  EXPECT_FALSE(t.read.truncated);
  EXPECT_EQ(t.header.producer(), kProducer);
  EXPECT_EQ(t.header.pid(), ::getpid());
  EXPECT_EQ(t.header.ppid(), ::getppid());
  EXPECT_EQ(t.header.cupti_api_version(), static_cast<uint32_t>(CUPTI_API_VERSION));
  EXPECT_EQ(t.header.cuda_driver_version(), 13000);
  EXPECT_EQ(t.header.clock(), proto::CLOCK_DOMAIN_MONOTONIC);
  EXPECT_GT(t.header.start_anchor().realtime_ns(), 0);
  EXPECT_EQ(t.header.start_anchor().trace_ns(), t.header.start_anchor().monotonic_ns());
  EXPECT_GE(t.end->end_anchor().monotonic_ns(), t.header.start_anchor().monotonic_ns());
  EXPECT_EQ(t.header.source_format(), "cupti");
  EXPECT_EQ(t.header.enabled_kinds_size(), 7);
  ASSERT_GT(t.header.command_line_size(), 0);

  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name(), "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sm_count(), 132u);

  const RecordBatch& r = t.records;
  ASSERT_EQ(r.kernels.size(), 4u);
  std::vector<std::string> kernel_names;
  for (const auto& k : r.kernels) kernel_names.emplace_back(t.strings.Raw(k.name_id));
  std::sort(kernel_names.begin(), kernel_names.end());
  EXPECT_EQ(kernel_names, (std::vector<std::string>{"_Z4tinyv", "_Z5finalv", "_Z6vecAddPfS_S_i",
                                                    "_Z6vecAddPfS_S_i"}));
  auto first = std::find_if(r.kernels.begin(), r.kernels.end(),
                            [](const KernelRecord& k) { return k.correlation_id == 10; });
  ASSERT_NE(first, r.kernels.end());
  EXPECT_EQ(first->start_ns, 100u);
  EXPECT_EQ(first->end_ns, 200u);
  EXPECT_EQ(first->stream_id, 7u);
  EXPECT_EQ(first->block[0], 128u);

  ASSERT_EQ(r.memcpys.size(), 2u);
  auto htod = std::find_if(r.memcpys.begin(), r.memcpys.end(),
                           [](const MemcpyRecord& m) { return m.copy_kind == CopyKind::kHtoD; });
  ASSERT_NE(htod, r.memcpys.end());
  EXPECT_TRUE(htod->pageable());
  EXPECT_EQ(htod->bytes, 4096u);
  auto ptop = std::find_if(r.memcpys.begin(), r.memcpys.end(),
                           [](const MemcpyRecord& m) { return m.copy_kind == CopyKind::kPtoP; });
  ASSERT_NE(ptop, r.memcpys.end());
  EXPECT_EQ(ptop->dst_device_id, 1u);
  ASSERT_EQ(r.memsets.size(), 1u);
  EXPECT_EQ(r.memsets[0].value, 7u);

  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(t.strings.Raw(r.ranges[0].name_id), "forward");
  EXPECT_EQ(t.strings.Raw(r.ranges[0].domain_id), "net");
  EXPECT_EQ(r.ranges[0].color, 0xFF76B900u);
  EXPECT_EQ(r.ranges[0].start_ns, 60u);
  EXPECT_EQ(r.ranges[0].end_ns, 600u);
  EXPECT_EQ(r.ranges[0].thread_id, 4242u);

  ASSERT_EQ(r.api_calls.size(), 1u);
  EXPECT_EQ(t.strings.Raw(r.api_calls[0].name_id), "cudaLaunchKernel");
  EXPECT_EQ(r.api_calls[0].correlation_id, 10u);
  ASSERT_EQ(r.syncs.size(), 1u);
  EXPECT_EQ(r.syncs[0].kind, SyncKind::kStreamSynchronize);
  EXPECT_EQ(r.syncs[0].device_id, 0u);
  EXPECT_EQ(r.syncs[0].stream_id, 7u);

  ASSERT_TRUE(t.statistics.has_value());
  const proto::Statistics& s = *t.statistics;
  EXPECT_EQ(s.kernels(), 4u);
  EXPECT_EQ(s.memcpys(), 2u);
  EXPECT_EQ(s.memsets(), 1u);
  EXPECT_EQ(s.ranges(), 1u);
  EXPECT_EQ(s.api_calls(), 1u);
  EXPECT_EQ(s.syncs(), 1u);
  EXPECT_EQ(s.other_records(), 1u);
  EXPECT_EQ(s.records_dropped_by_cupti(), 4u);  // 2 per buffer, 2 buffers
  EXPECT_EQ(s.records_dropped_queue_full(), 0u);
  EXPECT_EQ(s.buffers_requested(), 2u);
  EXPECT_EQ(s.buffers_completed(), 2u);
  EXPECT_EQ(s.buffers_refused(), 0u);
  EXPECT_EQ(s.buffer_bytes(), 4u << 20);
  EXPECT_EQ(s.cupti_overhead_ns(), 250u);
  EXPECT_GT(s.bytes_written(), 0u);
  EXPECT_GT(s.tool_cpu_ns(), 0u);
  EXPECT_EQ(s.peak_memory_bytes(), 1u << 20);
  std::map<std::string, uint64_t> invalid;
  for (const auto& i : s.invalid()) invalid[i.kind() + "/" + i.reason()] = i.count();
  EXPECT_EQ(invalid, (std::map<std::string, uint64_t>{{"kernel/zero_timestamp", 1},
                                                      {"kernel/inverted", 1}}));
}

TEST_F(InjectionSessionTest, ApiDomainFallbackFiltersAtConversion) {
  fake_->has_per_api_enable = false;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_EQ(std::count(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end(),
                       CUPTI_ACTIVITY_KIND_RUNTIME), 1);
  EXPECT_EQ(std::count(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end(),
                       CUPTI_ACTIVITY_KIND_DRIVER), 1);
  DeliverBuffer([](BufferWriter& w) {
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1, 2, 1));
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 3, 9, 2));
    w.Add(Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, 4, 5, 3));
    w.Add(Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 6, 8, 4));
  });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> names;
  for (const auto& a : t->records.api_calls) names.emplace_back(t->strings.Raw(a.name_id));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"cuLaunchKernel", "cudaMemcpy"}));
  EXPECT_EQ(t->statistics->api_calls(), 2u);
}

TEST_F(InjectionSessionTest, AnotherSubscriberKeepsCutraceOut) {
  fake_->subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  fake_->other_subscriber = "CUPTI for Nsight Systems";
  Status s = StartSession(MakeConfig());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUPTI for Nsight Systems"), std::string::npos) << s.message();
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterCallbacks"), -1);
  EXPECT_TRUE(fake_->enabled_kinds.empty());
  EXPECT_TRUE(Files().empty());
  session_->Finalize("exit");  // harmless
  EXPECT_EQ(fake_->flushes, 0);
}

TEST_F(InjectionSessionTest, WrongCuptiMajorVersionKeepsCutraceOut) {
  fake_->version = 26;  // a CUDA 12 libcupti
  Status s = StartSession(MakeConfig());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUTRACE_CUPTI_PATH"), std::string::npos) << s.message();
  EXPECT_EQ(fake_->IndexOf("cuptiSubscribe"), -1);
  EXPECT_TRUE(Files().empty());
}

TEST_F(InjectionSessionTest, UnwritableOutputUnsubscribes) {
  Config c = MakeConfig();
  c.output = dir_ + "/missing-dir/x.trace";
  Status s = StartSession(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("CUTRACE_OUTPUT"), std::string::npos) << s.message();
  EXPECT_TRUE(fake_->unsubscribed);
  EXPECT_EQ(fake_->IndexOf("cuptiActivityRegisterCallbacks"), -1);
  EXPECT_TRUE(fake_->enabled_kinds.empty());
}

TEST_F(InjectionSessionTest, ExistingFileGetsANumberedSibling) {
  std::ofstream(dir_ + "/fixed.trace") << "someone else's";
  Config c = MakeConfig();
  c.output = dir_ + "/fixed.trace";
  c.file_mode = 0640;
  ASSERT_TRUE(StartSession(c).ok());
  EXPECT_EQ(session_->path(), dir_ + "/fixed-1.trace");
  struct stat st;
  ASSERT_EQ(::stat(session_->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  session_->Finalize("exit");
  EXPECT_TRUE(LoadTrace(session_->path()).ok());
}

TEST_F(InjectionSessionTest, ManifestGetsThePath) {
  std::string manifest = dir_ + "/manifest";
  std::ofstream(manifest).close();
  Config c = MakeConfig();
  c.output = dir_ + "/t-%p.trace";
  c.run_manifest = manifest;
  ASSERT_TRUE(StartSession(c).ok());
  std::ifstream in(manifest);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), session_->path() + "\n");
  EXPECT_EQ(session_->path(), dir_ + "/t-" + std::to_string(::getpid()) + ".trace");
}

TEST_F(InjectionSessionTest, PoolExhaustionIsCountedAndWarned) {
  Config c = MakeConfig();
  c.buffer_count = 2;
  ASSERT_TRUE(StartSession(c).ok());
  uint8_t* b[3];
  size_t size, max_records;
  for (auto& p : b) fake_->requested(&p, &size, &max_records);
  EXPECT_NE(b[0], nullptr);
  EXPECT_NE(b[1], nullptr);
  EXPECT_EQ(b[2], nullptr);
  EXPECT_EQ(size, 0u);
  fake_->completed(nullptr, 0, b[0], 1u << 20, 0);
  fake_->completed(nullptr, 0, b[1], 1u << 20, 0);
  session_->Finalize("SIGTERM");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->statistics->buffers_refused(), 1u);
  EXPECT_EQ(t->statistics->buffers_requested(), 3u);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("CUTRACE_BUFFER_COUNT"), std::string::npos);
  EXPECT_EQ(t->end->reason(), "SIGTERM");
}

TEST_F(InjectionSessionTest, FinalizeRunsOnceAndLateCallbacksAreHarmless) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  uint8_t* held = nullptr;
  size_t size, max_records;
  fake_->requested(&held, &size, &max_records);
  ASSERT_NE(held, nullptr);
  session_->Finalize("exit");
  session_->Finalize("exit");
  EXPECT_EQ(fake_->flushes, 1);
  EXPECT_TRUE(session_->finished());
  // After shutdown CUPTI gets no buffers, and one it still held is taken back.
  uint8_t* late = reinterpret_cast<uint8_t*>(1);
  fake_->requested(&late, &size, &max_records);
  EXPECT_EQ(late, nullptr);
  BufferWriter w(held, size);
  w.Add(Kernel("_Z4latev", 1, 2, 1));
  fake_->completed(nullptr, 0, held, size, w.used());
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_TRUE(t->records.kernels.empty());
}

TEST_F(InjectionSessionTest, CuptiClockWhenNoTimestampCallback) {
  fake_->has_timestamp_callback = false;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_EQ(session_->clock(), ClockDomain::kCupti);
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->header.clock(), proto::CLOCK_DOMAIN_CUPTI);
  EXPECT_EQ(t->header.start_anchor().trace_ns(), 1000);  // FakeCupti's timestamp
  EXPECT_GT(t->header.start_anchor().monotonic_ns(), 0);
}

TEST_F(InjectionSessionTest, ForkedChildNeverTouchesTheParentsTrace) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // In the child: no flush, no writer, no file change; returns at once.
    session_->Finalize("exit");
    uint8_t* buffer = nullptr;
    size_t size, max_records;
    fake_->requested(&buffer, &size, &max_records);
    if (buffer != nullptr) fake_->completed(nullptr, 0, buffer, size, 0);
    ::_exit(fake_->flushes == 0 && session_->finished() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(session_->running());
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->clean_shutdown());
  EXPECT_EQ(t->statistics->buffers_completed(), 0u);
}

}  // namespace
}  // namespace cutrace::injection
