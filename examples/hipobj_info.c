/* hipobj_info.c - `hipobj info`: what this machine offers hipObject's data
 * paths: each GPU platform (runtime found or why not, devices with their PCIe
 * bus ids, dma-buf export) and RDMA. Also the --gpu option's parsing and
 * platform choice used by cp. Public API only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hipobj_cli.h"

static const struct {
  const char *name;
  enum hipobj_mem_kind kind;
} gpu_platforms[] = {
    {"cuda", HIPOBJ_MEM_CUDA},
    {"hip", HIPOBJ_MEM_HIP},
};
#define N_GPU_PLATFORMS (sizeof gpu_platforms / sizeof gpu_platforms[0])

/* ---- --gpu ----------------------------------------------------------------
 */

int cli_gpu_parse(struct cli *c, const char *value) {
  const char *num = value;
  c->gpu_kind_given = 0;
  for (size_t i = 0; i < N_GPU_PLATFORMS; i++) {
    size_t n = strlen(gpu_platforms[i].name);
    if (!strncmp(value, gpu_platforms[i].name, n) && value[n] == ':') {
      c->gpu_kind = gpu_platforms[i].kind;
      c->gpu_kind_given = 1;
      num = value + n + 1;
    }
  }
  char *end = NULL;
  errno = 0;
  long v = strtol(num, &end, 10);
  if (errno || end == num || *end || v < 0 || v > 1023)
    return report_usage("--gpu: '%s' is not a GPU (N, cuda:N or hip:N)", value);
  c->gpu_device = (int)v;
  c->use_gpu = 1;
  return 0;
}

int cli_gpu_resolve(struct cli *c) {
  char causes[1200] = "";
  size_t used = 0;
  for (size_t i = 0; i < N_GPU_PLATFORMS; i++) {
    if (c->gpu_kind_given && gpu_platforms[i].kind != c->gpu_kind)
      continue;
    struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
    const char *why = "";
    char buf[64];
    if (hipobj_gpu_platform_info(gpu_platforms[i].kind, &pi, c->err) !=
        HIPOBJ_OK) {
      why = hipobj_error_message(c->err);
    } else if (!pi.available) {
      why = pi.reason;
    } else if (c->gpu_device >= pi.device_count) {
      snprintf(buf, sizeof buf, "it has %d device%s", pi.device_count,
               pi.device_count == 1 ? "" : "s");
      why = buf;
    } else {
      c->gpu_kind = gpu_platforms[i].kind;
      return 0;
    }
    int k = snprintf(causes + used, sizeof causes - used, "%s%s: %s",
                     used ? "; " : "", gpu_platforms[i].name, why);
    if (k > 0 && (size_t)k < sizeof causes - used)
      used += (size_t)k;
  }
  return report_msg("--gpu", "no GPU %d to use (%s)", c->gpu_device, causes);
}

/* ---- info -----------------------------------------------------------------
 */

static void info_devices(const struct cli *c, const char *platform,
                         enum hipobj_mem_kind kind, int n) {
  for (int d = 0; d < n; d++) {
    struct hipobj_gpu_device_info di = HIPOBJ_GPU_DEVICE_INFO_INIT;
    int st = hipobj_gpu_device_info(kind, d, &di, c->err);
    if (c->json) {
      json_begin(stdout, "info");
      json_str(stdout, "platform", platform);
      json_u64(stdout, "device", (uint64_t)d);
      if (st != HIPOBJ_OK) {
        json_str(stdout, "error", hipobj_error_message(c->err));
      } else {
        json_str(stdout, "name", di.name);
        json_str(stdout, "pci_bus_id", di.pci_bus_id);
        json_u64(stdout, "dmabuf", di.dmabuf ? 1 : 0);
        json_str(stdout, "dmabuf_reason", di.dmabuf_reason);
        json_str(stdout, "rdma_nic", di.rdma_nic);
        json_str(stdout, "rdma_nic_reason", di.rdma_nic_reason);
      }
      json_end(stdout);
    } else if (st != HIPOBJ_OK) {
      cli_print(stdout, "    device %d: %s\n", d, hipobj_error_message(c->err));
    } else {
      cli_print(stdout, "    device %d: %s, PCIe %s, dma-buf export: %s%s%s\n",
                d, di.name[0] ? di.name : "(unnamed)",
                di.pci_bus_id[0] ? di.pci_bus_id : "unknown",
                di.dmabuf ? "yes" : "no", di.dmabuf ? "" : " - ",
                di.dmabuf ? "" : di.dmabuf_reason);
      if (di.rdma_nic[0])
        cli_print(stdout, "      RDMA NIC: %s (%s)\n", di.rdma_nic,
                  di.rdma_nic_reason);
      else
        cli_print(stdout, "      RDMA NIC: none (%s)\n", di.rdma_nic_reason);
    }
  }
}

static void info_gpu(const struct cli *c) {
  if (!c->json)
    cli_print(stdout,
              "GPU memory (RDMA through dma-buf or pinned chunks when a NIC "
              "and the server allow, else HTTP through pinned chunks):\n");
  for (size_t i = 0; i < N_GPU_PLATFORMS; i++) {
    const char *name = gpu_platforms[i].name;
    struct hipobj_gpu_platform_info pi = HIPOBJ_GPU_PLATFORM_INFO_INIT;
    int st = hipobj_gpu_platform_info(gpu_platforms[i].kind, &pi, c->err);
    const char *reason =
        st != HIPOBJ_OK ? hipobj_error_message(c->err) : pi.reason;
    if (c->json) {
      json_begin(stdout, "info");
      json_str(stdout, "platform", name);
      json_str(stdout, "library", pi.library);
      json_u64(stdout, "available", pi.available ? 1 : 0);
      json_str(stdout, "version", pi.version);
      json_u64(stdout, "devices", (uint64_t)pi.device_count);
      json_str(stdout, "reason", pi.available ? "" : reason);
      json_end(stdout);
    } else if (pi.available) {
      cli_print(stdout, "  %s: available (%s), %d device%s\n", name, pi.version,
                pi.device_count, pi.device_count == 1 ? "" : "s");
    } else {
      cli_print(stdout, "  %s: not available: %s\n", name, reason);
    }
    if (pi.available)
      info_devices(c, name, gpu_platforms[i].kind, pi.device_count);
  }
}

/* RDMA: devices, ports, GIDs and the choice the library would make for
 * host memory (the GPU lines above name each GPU's NIC). */
static void info_rdma(const struct cli *c) {
  char *text = NULL;
  int rc = hipobj_rdma_info(&text, c->err);
  const char *what = text && *text ? text : hipobj_error_message(c->err);
  if (c->json) {
    json_begin(stdout, "info");
    json_str(stdout, "rdma", rc == HIPOBJ_OK ? "available" : "unavailable");
    json_str(stdout, "details", what);
    json_end(stdout);
  } else {
    cli_print(stdout, "RDMA:\n");
    for (const char *l = what; *l;) { /* line by line: each one escaped */
      size_t n = strcspn(l, "\n");
      cli_print(stdout, "%.*s\n", (int)n, l);
      l += n + (l[n] == '\n');
    }
  }
  hipobj_free(text);
}

int cmd_info(struct cli *c, int argc, char **argv) {
  (void)argv;
  if (argc != 0)
    return report_usage("info takes no arguments");
  if (!c->json)
    cli_print(stdout, "hipobj %d.%d.%d (libhipobj %s)\n", HIPOBJ_VERSION_MAJOR,
              HIPOBJ_VERSION_MINOR, HIPOBJ_VERSION_PATCH, hipobj_version());
  info_gpu(c);
  info_rdma(c);
  return 0;
}
