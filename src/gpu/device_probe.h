// Whether this machine has an NVIDIA GPU, read from what the kernel driver shows (device nodes,
// /proc/driver/nvidia) without loading NVML. "auto" asks it when NVML fails: a machine with a GPU
// whose NVML fails must not quietly become a simulated node.
#pragma once

#include <string>

namespace pinpoint::gpu {

// The first sign of an NVIDIA GPU under `root` ("/" on a real machine; a directory laid out like
// one in tests): an entry <root>/dev/nvidia<N> or <root>/dev/nvidiactl, or any entry of
// <root>/proc/driver/nvidia/gpus/. Returns its path as seen from `root` ("/dev/nvidia0"), or ""
// when there is none. Only names are read: no file is opened, no link followed, and a directory
// that cannot be read counts as holding nothing. Cost: one readdir of <root>/dev and one of the
// gpus directory.
std::string FindNvidiaDevice(const std::string& root = "/");

}  // namespace pinpoint::gpu
