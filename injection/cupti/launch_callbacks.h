// The CUPTI callback ids cutrace watches on the runtime and driver API
// domains, in one place: the kernel launches (whose callbacks carry the
// kernel's symbol name: launch names after a module unload, the range
// profiler's per-launch ranges) and the graph instantiations and launches
// (which stop continuous mode's detaching). Pure data; any thread.
#pragma once

#include <cupti.h>

#include <span>

namespace cutrace::injection {

// The launch calls whose callbacks carry the kernel's symbol name.
inline constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000};
inline constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};

// Graph instantiations and launches: once CUPTI has seen one with kinds on,
// detaching corrupts the process (graph_replay on the H200 crashed at the
// first launch after the second cuptiFinalize, with only kernels traced).
inline constexpr CUpti_CallbackId kRuntimeGraphCalls[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_ptsz_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000};
inline constexpr CUpti_CallbackId kDriverGraphCalls[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz};

constexpr bool ContainsCallback(std::span<const CUpti_CallbackId> ids, CUpti_CallbackId cbid) {
  for (CUpti_CallbackId id : ids)
    if (id == cbid) return true;
  return false;
}

// A kernel launch of either API domain.
constexpr bool IsLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API && ContainsCallback(kRuntimeLaunches, cbid)) ||
         (domain == CUPTI_CB_DOMAIN_DRIVER_API && ContainsCallback(kDriverLaunches, cbid));
}

// A graph instantiation or launch of either API domain.
constexpr bool IsGraphCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return (domain == CUPTI_CB_DOMAIN_RUNTIME_API && ContainsCallback(kRuntimeGraphCalls, cbid)) ||
         (domain == CUPTI_CB_DOMAIN_DRIVER_API && ContainsCallback(kDriverGraphCalls, cbid));
}

}  // namespace cutrace::injection
