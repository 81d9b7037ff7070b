// The few NVML types and calls migserve uses, declared here with the ABI of
// NVIDIA's nvml.h (NVML 12/13) so the project builds without NVIDIA's
// headers; the library itself is opened at run time (dlopen_nvml.h). Field
// order and values follow nvml.h; see notes/kubernetes.md section 5.
#ifndef MIGSERVE_AGENT_NVML_TYPES_H_
#define MIGSERVE_AGENT_NVML_TYPES_H_

extern "C" {

typedef int nvmlReturn_t;
enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_UNKNOWN = 999,
};

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st* nvmlComputeInstance_t;

enum : unsigned int { NVML_DEVICE_MIG_DISABLE = 0, NVML_DEVICE_MIG_ENABLE = 1 };

// GPU instance profile enums run from 0 (1 slice) up; newer drivers add
// more. Unknown ones answer NOT_SUPPORTED or INVALID_ARGUMENT.
enum : unsigned int { NVML_GPU_INSTANCE_PROFILE_ENUM_LIMIT = 16 };
// Compute instance profile enums by slice count (1, 2, 3, 4, 7, 8, 6).
enum : unsigned int {
  NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE = 0,
  NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE = 1,
  NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE = 2,
  NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE = 3,
  NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE = 4,
  NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE = 5,
  NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE = 6,
};
enum : unsigned int { NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED = 0 };

// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it. pciDeviceId holds the
// 16-bit device id in its upper half and the vendor id (0x10DE) in its lower.
enum : unsigned int {
  NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16,
  NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32,
};
typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlComputeInstanceProfileInfo_st {
  unsigned int id;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

// A process with a compute context, as nvmlDeviceGetComputeRunningProcesses_v3
// reports it; on a MIG-enabled GPU's own handle (with the privileges the
// agent has), each process names its GPU and compute instance.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;
// The calls, by their NVML symbol names. migserve never links them: the
// agent looks them up in the library it opens, and the fake library used by
// the tests defines them, so the compiler checks both against this list.
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
const char* nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                           nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                               unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                  unsigned int* pending);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                     unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(
    nvmlDevice_t device, unsigned int profile,
    nvmlGpuInstanceProfileInfo_t* info);
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device,
                                       unsigned int profileId,
                                       nvmlGpuInstance_t* gpuInstances,
                                       unsigned int* count);
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t device, unsigned int profileId,
    const nvmlGpuInstancePlacement_t* placement,
    nvmlGpuInstance_t* gpuInstance);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance,
                                    nvmlGpuInstanceInfo_t* info);
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t gpuInstance, unsigned int profile,
    unsigned int engProfile, nvmlComputeInstanceProfileInfo_t* info);
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(
    nvmlGpuInstance_t gpuInstance, unsigned int profileId,
    nvmlComputeInstance_t* computeInstance);
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(
    nvmlGpuInstance_t gpuInstance, unsigned int profileId,
    nvmlComputeInstance_t* computeInstances, unsigned int* count);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance);
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance);

}  // extern "C"

#endif  // MIGSERVE_AGENT_NVML_TYPES_H_
