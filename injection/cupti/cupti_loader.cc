#include "injection/cupti/cupti_loader.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>

#include "collector/cupti_search.h"
#include "injection/log.h"

namespace cutrace::injection {
namespace {

// This library's own file: installed from the Python wheel, its
// site-packages is where the program's NVIDIA wheels most likely are
// (collector/cupti_search.h).
std::string SelfPath() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void*>(&SelfPath), &info) == 0 || info.dli_fname == nullptr)
    return "";
  return info.dli_fname;
}

// The process's search, with `override_path` as CUTRACE_CUPTI_PATH.
CuptiSearch ProcessSearch(std::string_view override_path) {
  CuptiSearch search = CuptiSearchFromEnvironment(SelfPath(), "");
  search.override_path = std::string(override_path);
  // What `cutrace run` chose, knowing the program's interpreter (a venv's
  // python resolves to the base interpreter in /proc/self/exe).
  if (const char* nvtx = ::getenv("NVTX_INJECTION64_PATH"); nvtx != nullptr) {
    const std::string_view path = nvtx;
    const size_t slash = path.rfind('/');
    if (slash != std::string_view::npos && path.substr(slash + 1, 11) == "libcupti.so")
      search.chosen = std::string(path);
  }
  return search;
}

// Function pointer types of the entry points, from the CUPTI headers.
using GetVersionFn = CUptiResult (*)(uint32_t*);
using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using SubscribeV2Fn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                                      CUpti_SubscriberParams*);
using UnsubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle);
using RegisterCallbacksFn = CUptiResult (*)(CUpti_BuffersCallbackRequestFunc,
                                            CUpti_BuffersCallbackCompleteFunc);
using RegisterTimestampFn = CUptiResult (*)(CUpti_TimestampCallbackFunc);
using SetThreadIdTypeFn = CUptiResult (*)(CUpti_ActivityThreadIdType);
using SetAttributeFn = CUptiResult (*)(CUpti_ActivityAttribute, size_t*, void*);
using FlushPeriodFn = CUptiResult (*)(uint32_t);
using EnableFn = CUptiResult (*)(CUpti_ActivityKind);
using EnableApiFn = CUptiResult (*)(CUpti_CallbackId, uint8_t);
using NextRecordFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
using DroppedFn = CUptiResult (*)(CUcontext, uint32_t, size_t*);
using FlushAllFn = CUptiResult (*)(uint32_t);
using CallbackNameFn = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);
using TimestampFn = CUptiResult (*)(uint64_t*);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char**);
using VersionIntFn = int (*)(int*);  // CUresult / cudaError_t are int-sized enums

class DlCuptiApi final : public CuptiApi {
 public:
  explicit DlCuptiApi(void* handle) : handle_(handle) {}
  // The handle is never dlclose()d: CUPTI keeps threads and callbacks into us.

  // Resolves the entry points; the name of the first missing required one
  // goes to *missing.
  bool Resolve(std::string* missing) {
    bool ok = true;
    auto need = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle_, name));
      if (fn == nullptr && ok) {
        ok = false;
        *missing = name;
      }
    };
    auto want = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle_, name));
    };
    need(get_version_, "cuptiGetVersion");
    need(subscribe_, "cuptiSubscribe");
    want(subscribe_v2_, "cuptiSubscribe_v2");
    need(unsubscribe_, "cuptiUnsubscribe");
    need(register_callbacks_, "cuptiActivityRegisterCallbacks");
    want(register_timestamp_, "cuptiActivityRegisterTimestampCallback");
    want(set_thread_id_type_, "cuptiSetThreadIdType");
    want(set_attribute_, "cuptiActivitySetAttribute");
    want(flush_period_, "cuptiActivityFlushPeriod");
    need(enable_, "cuptiActivityEnable");
    want(disable_, "cuptiActivityDisable");
    want(enable_callback_, "cuptiEnableCallback");
    want(enable_domain_, "cuptiEnableDomain");
    want(finalize_, "cuptiFinalize");
    want(latency_timestamps_, "cuptiActivityEnableLatencyTimestamps");
    want(enable_runtime_api_, "cuptiActivityEnableRuntimeApi");
    want(enable_driver_api_, "cuptiActivityEnableDriverApi");
    need(next_record_, "cuptiActivityGetNextRecord");
    need(dropped_, "cuptiActivityGetNumDroppedRecords");
    need(flush_all_, "cuptiActivityFlushAll");
    need(callback_name_, "cuptiGetCallbackName");
    need(timestamp_, "cuptiGetTimestamp");
    want(result_string_, "cuptiGetResultString");
    return ok;
  }

  CUptiResult GetVersion(uint32_t* version) override { return get_version_(version); }

  CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                        void* userdata, const char* name,
                        std::string* other_subscriber) override {
    if (subscribe_v2_ == nullptr) return subscribe_(subscriber, callback, userdata);
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = {};
    CUpti_SubscriberParams params;
    std::memset(&params, 0, sizeof(params));
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = name;
    params.oldSubscriberName = other;
    params.oldSubscriberSize = sizeof(other);
    CUptiResult r = subscribe_v2_(subscriber, callback, userdata, &params);
    other[sizeof(other) - 1] = '\0';
    if (other_subscriber != nullptr) *other_subscriber = other;
    return r;
  }
  CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber) override {
    return unsubscribe_(subscriber);
  }
  CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override {
    return enable_callback_ ? enable_callback_(enable, subscriber, domain, cbid)
                            : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult EnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                           CUpti_CallbackDomain domain) override {
    return enable_domain_ ? enable_domain_(enable, subscriber, domain) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult Finalize() override { return finalize_ ? finalize_() : CUPTI_ERROR_NOT_SUPPORTED; }
  bool ProgramHasOwnClient() const override { return program_client_; }
  void* EntryPoint(const char* name) override { return ::dlsym(handle_, name); }
  void set_program_client(bool v) { program_client_ = v; }
  CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                        CUpti_BuffersCallbackCompleteFunc completed) override {
    return register_callbacks_(requested, completed);
  }
  CUptiResult ActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) override {
    return register_timestamp_ ? register_timestamp_(fn) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult SetThreadIdType(CUpti_ActivityThreadIdType type) override {
    return set_thread_id_type_ ? set_thread_id_type_(type) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                   void* value) override {
    return set_attribute_ ? set_attribute_(attr, value_size, value) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityFlushPeriod(uint32_t ms) override {
    return flush_period_ ? flush_period_(ms) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityEnable(CUpti_ActivityKind kind) override { return enable_(kind); }
  CUptiResult ActivityDisable(CUpti_ActivityKind kind) override {
    return disable_ ? disable_(kind) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityEnableLatencyTimestamps(uint8_t enable) override {
    return latency_timestamps_ ? latency_timestamps_(enable) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) override {
    return enable_runtime_api_ ? enable_runtime_api_(cbid, enable) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) override {
    return enable_driver_api_ ? enable_driver_api_(cbid, enable) : CUPTI_ERROR_NOT_SUPPORTED;
  }
  CUptiResult ActivityGetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                    CUpti_Activity** record) override {
    return next_record_(buffer, valid_bytes, record);
  }
  CUptiResult ActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                           size_t* dropped) override {
    return dropped_(context, stream_id, dropped);
  }
  CUptiResult ActivityFlushAll(uint32_t flag) override { return flush_all_(flag); }
  CUptiResult GetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                              const char** name) override {
    return callback_name_(domain, cbid, name);
  }
  CUptiResult GetTimestamp(uint64_t* timestamp) override { return timestamp_(timestamp); }
  std::string ResultString(CUptiResult result) override {
    const char* s = nullptr;
    if (result_string_ != nullptr && result_string_(result, &s) == CUPTI_SUCCESS && s != nullptr) {
      return s;
    }
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }

  int DriverVersion() override {
    // libcuda is already loaded when the driver calls InitializeInjection;
    // RTLD_NOLOAD never loads it on our account.
    void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (cuda == nullptr) return 0;
    int version = 0;
    if (auto fn = reinterpret_cast<VersionIntFn>(::dlsym(cuda, "cuDriverGetVersion"))) {
      if (fn(&version) != 0) version = 0;
    }
    ::dlclose(cuda);  // drops only the reference RTLD_NOLOAD added
    return version;
  }
  bool SynchronizeContext() override {
    // libcuda is loaded (the driver started cutrace); RTLD_NOLOAD never loads it.
    void* cuda = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (cuda == nullptr) return false;
    using SyncFn = int (*)();
    auto fn = reinterpret_cast<SyncFn>(::dlsym(cuda, "cuCtxSynchronize"));
    const bool ok = fn != nullptr && fn() == 0;
    ::dlclose(cuda);  // drops only the reference RTLD_NOLOAD added
    return ok;
  }
  int RuntimeVersion() override {
    // Only a dynamically linked cudart is visible (globally, or loaded
    // locally as libcudart.so.13, as PyTorch does); a static one reports 0.
    int version = 0;
    auto fn = reinterpret_cast<VersionIntFn>(::dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion"));
    void* cudart = nullptr;
    if (fn == nullptr) {
      cudart = ::dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (cudart != nullptr) fn = reinterpret_cast<VersionIntFn>(::dlsym(cudart, "cudaRuntimeGetVersion"));
    }
    if (fn != nullptr && fn(&version) != 0) version = 0;
    if (cudart != nullptr) ::dlclose(cudart);
    return version;
  }

 private:
  void* handle_;
  GetVersionFn get_version_ = nullptr;
  SubscribeFn subscribe_ = nullptr;
  SubscribeV2Fn subscribe_v2_ = nullptr;
  UnsubscribeFn unsubscribe_ = nullptr;
  RegisterCallbacksFn register_callbacks_ = nullptr;
  RegisterTimestampFn register_timestamp_ = nullptr;
  SetThreadIdTypeFn set_thread_id_type_ = nullptr;
  SetAttributeFn set_attribute_ = nullptr;
  FlushPeriodFn flush_period_ = nullptr;
  EnableFn enable_ = nullptr;
  EnableFn disable_ = nullptr;
  CUptiResult(CUPTIAPI* latency_timestamps_)(uint8_t) = nullptr;
  CUptiResult(CUPTIAPI* enable_callback_)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                           CUpti_CallbackId) = nullptr;
  CUptiResult(CUPTIAPI* enable_domain_)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) = nullptr;
  CUptiResult(CUPTIAPI* finalize_)() = nullptr;
  bool program_client_ = false;
  EnableApiFn enable_runtime_api_ = nullptr;
  EnableApiFn enable_driver_api_ = nullptr;
  NextRecordFn next_record_ = nullptr;
  DroppedFn dropped_ = nullptr;
  FlushAllFn flush_all_ = nullptr;
  CallbackNameFn callback_name_ = nullptr;
  TimestampFn timestamp_ = nullptr;
  ResultStringFn result_string_ = nullptr;
};

}  // namespace

std::vector<std::string> CuptiCandidates(std::string_view override_path,
                                         std::string_view ld_library_path) {
  CuptiSearch search;
  search.override_path = std::string(override_path);
  search.ld_library_path = std::string(ld_library_path);
  search.ld_cache = false;
  return CuptiCandidateFiles(search);
}

std::optional<std::string> FindCuptiLibrary(std::string_view override_path) {
  std::string found = FindCuptiFile(ProcessSearch(override_path));
  if (found.empty()) return std::nullopt;
  return found;
}

namespace {

// The file a dlopen() handle came from ("" if unknown).
std::string LoadedFrom(void* handle) {
  struct link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    return map->l_name;
  }
  return "";
}

}  // namespace

StatusOr<std::unique_ptr<CuptiApi>> LoadCupti(std::string_view override_path,
                                              std::string* loaded_path) {
  std::optional<std::string> path = FindCuptiLibrary(override_path);
  std::string what = path ? *path : std::string(kCuptiSoname);
  // A program may already carry its own libcupti (PyTorch's wheels do). Two
  // copies in one process are two CUPTI instances competing for the driver's
  // one tools interface: the second one's cuptiSubscribe fails as if another
  // tool were there (Kineto then turns GPU tracing off). So cutrace joins the
  // program's copy, unless CUTRACE_CUPTI_PATH says otherwise.
  bool program_client = false;
  if (void* other = ::dlopen(kCuptiSoname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    program_client = true;
    std::string other_path = LoadedFrom(other);
    char a[PATH_MAX], b[PATH_MAX];
    bool same = path && ::realpath(other_path.c_str(), a) && ::realpath(path->c_str(), b) &&
                std::strcmp(a, b) == 0;
    if (!same && override_path.empty() && !other_path.empty()) {
      Log(LogLevel::kDebug, "the program already loaded %s: cutrace uses it too (one CUPTI), "
          "not %s", other_path.c_str(), path ? path->c_str() : kCuptiSoname);
      path = other_path;
      what = other_path;
    } else if (!same) {
      Log(LogLevel::kDebug, "the program already loaded %s; cutrace uses %s (CUTRACE_CUPTI_PATH)",
          other_path.c_str(), what.c_str());
    }
    ::dlclose(other);  // drops only the reference RTLD_NOLOAD added
  }
  ::dlerror();
  void* handle = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    // Where the search looked, so the fix is plain (a wheel or toolkit
    // where none of these is).
    const std::string looked =
        path ? std::string() : "; looked in " + DescribeCuptiSearch(ProcessSearch(override_path));
    return Status::Error("cannot load libcupti (" + what + "): " + (err ? err : "unknown error") +
                         looked + "; set CUTRACE_CUPTI_PATH to libcupti.so.13 of CUDA 13");
  }
  if (!path) {
    // Found through the loader's cache: ask where it came from.
    if (std::string from = LoadedFrom(handle); !from.empty()) what = from;
  }
  if (loaded_path != nullptr) *loaded_path = what;
  auto api = std::make_unique<DlCuptiApi>(handle);
  // Frameworks whose profilers subscribe to CUPTI when the user starts them
  // (torch.profiler, TensorFlow's), whether or not their libcupti is loaded yet.
  for (const char* framework : {"libtorch_cuda.so", "libtensorflow_framework.so.2"}) {
    if (void* f = ::dlopen(framework, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
      program_client = true;
      ::dlclose(f);
    }
  }
  api->set_program_client(program_client);
  std::string missing;
  if (!api->Resolve(&missing)) {
    return Status::Error("libcupti at " + what + " lacks " + missing +
                         "; set CUTRACE_CUPTI_PATH to libcupti.so.13 of CUDA 13");
  }
  return std::unique_ptr<CuptiApi>(std::move(api));
}

}  // namespace cutrace::injection
