// Probe: cost of cuMemHostRegister/Unregister on a 64 MiB grid buffer, DMA into registered vs
// pinned memory, and host copy bandwidth pinned -> pageable with threads.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <immintrin.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;
#define F(ret, name, args) static ret(*name) args;
F(CUresult, cuInit, (unsigned))
F(CUresult, cuDeviceGet, (CUdevice *, int))
F(CUresult, cuDeviceGetCount, (int *))
F(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))
F(CUresult, cuCtxSetCurrent, (CUcontext))
F(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t))
F(CUresult, cuMemHostAlloc, (void **, size_t, unsigned))
F(CUresult, cuMemHostRegister_v2, (void *, size_t, unsigned))
F(CUresult, cuMemHostUnregister, (void *))
F(CUresult, cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream))
F(CUresult, cuStreamCreate, (CUstream *, unsigned))
F(CUresult, cuStreamSynchronize, (CUstream))
F(CUresult, cuMemsetD32_v2, (CUdeviceptr, unsigned, size_t))
F(CUresult, cuCtxSynchronize, (void))

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s -> %d\n", #x, r_); } } while (0)

static size_t N = 64u << 20;

typedef struct { const char *src; char *dst; size_t n; int nt; } Job;
static void *work(void *p) {
  Job *j = p;
  if (!j->nt) { memcpy(j->dst, j->src, j->n); return 0; }
  const __m256 *s = (const __m256 *)j->src;
  __m256 *d = (__m256 *)j->dst;
  size_t k = j->n / 32;
  for (size_t i = 0; i < k; i++) _mm256_stream_ps((float *)(d + i), _mm256_load_ps((const float *)(s + i)));
  _mm_sfence();
  return 0;
}
static double par_copy(char *dst, const char *src, size_t n, int threads, int nt) {
  pthread_t th[64];
  Job jobs[64];
  double t0 = now();
  size_t per = n / threads;
  for (int i = 0; i < threads; i++) {
    jobs[i] = (Job){src + i * per, dst + i * per, per, nt};
    pthread_create(&th[i], 0, work, &jobs[i]);
  }
  for (int i = 0; i < threads; i++) pthread_join(th[i], 0);
  return now() - t0;
}

int main(void) {
  setvbuf(stdout, 0, _IONBF, 0);
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) { printf("no libcuda\n"); return 1; }
#define L(name) name = dlsym(h, #name); if (!name) printf("missing %s\n", #name);
  L(cuInit) L(cuDeviceGet) L(cuDeviceGetCount) L(cuDevicePrimaryCtxRetain) L(cuCtxSetCurrent) L(cuMemAlloc_v2)
  L(cuMemHostAlloc) L(cuMemHostRegister_v2) L(cuMemHostUnregister) L(cuMemcpyDtoHAsync_v2) L(cuStreamCreate)
  L(cuStreamSynchronize) L(cuMemsetD32_v2) L(cuCtxSynchronize)
  CK(cuInit(0));
  int ndev = 0;
  CK(cuDeviceGetCount(&ndev));
  CUcontext ctx[2];
  CUstream st[2];
  CUdeviceptr dbuf[2];
  for (int d = 0; d < ndev && d < 2; d++) {
    CUdevice dev;
    CK(cuDeviceGet(&dev, d));
    CK(cuDevicePrimaryCtxRetain(&ctx[d], dev));
    CK(cuCtxSetCurrent(ctx[d]));
    CK(cuStreamCreate(&st[d], 1));
    CK(cuMemAlloc_v2(&dbuf[d], N));
    CK(cuMemsetD32_v2(dbuf[d], 0x3f800000u, N / 4));
    CK(cuCtxSynchronize());
  }
  CK(cuCtxSetCurrent(ctx[0]));
  printf("devices %d\n", ndev);
  // A recycled grid buffer: malloc'd and touched.
  for (int huge = 0; huge < 2; huge++) {
    char *g;
    if (huge) {
      g = aligned_alloc(2 << 20, N);
      madvise(g, N, MADV_HUGEPAGE);
    } else {
      g = malloc(N);
    }
    memset(g, 1, N);
    for (int flags = 0; flags < 2; flags++) {
      for (int r = 0; r < 4; r++) {
        double t0 = now();
        CK(cuMemHostRegister_v2(g, N, flags ? 1 : 0));
        double t1 = now();
        CK(cuMemcpyDtoHAsync_v2(g, dbuf[0], N, st[0]));
        CK(cuStreamSynchronize(st[0]));
        double t2 = now();
        // 16 chunks of 4 MiB
        for (int c = 0; c < 16; c++) CK(cuMemcpyDtoHAsync_v2(g + c * (N / 16), dbuf[0], N / 16, st[0]));
        CK(cuStreamSynchronize(st[0]));
        double t3 = now();
        double t4 = t3, t5 = t3;
        if (ndev > 1 && flags) {
          CK(cuCtxSetCurrent(ctx[1]));
          CK(cuMemcpyDtoHAsync_v2(g, dbuf[1], N, st[1]));
          CK(cuStreamSynchronize(st[1]));
          t4 = now();
          // both devices at once, halves
          CK(cuMemcpyDtoHAsync_v2(g + N / 2, dbuf[1], N / 2, st[1]));
          CK(cuCtxSetCurrent(ctx[0]));
          CK(cuMemcpyDtoHAsync_v2(g, dbuf[0], N / 2, st[0]));
          CK(cuStreamSynchronize(st[0]));
          CK(cuCtxSetCurrent(ctx[1]));
          CK(cuStreamSynchronize(st[1]));
          CK(cuCtxSetCurrent(ctx[0]));
          t5 = now();
        }
        CK(cuMemHostUnregister(g));
        double t6 = now();
        printf("huge %d portable %d: register %.3f ms, dtoh 64MiB %.3f ms, 16 chunks %.3f ms, dev1 %.3f, both halves %.3f, unregister %.3f ms\n",
               huge, flags, t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5);
      }
    }
    free(g);
  }
  // Fresh (untouched) buffer registration.
  {
    char *g = malloc(N);
    double t0 = now();
    CK(cuMemHostRegister_v2(g, N, 1));
    double t1 = now();
    CK(cuMemHostUnregister(g));
    printf("untouched: register %.3f ms unregister %.3f ms\n", t1 - t0, now() - t1);
    free(g);
  }
  // Pinned allocation DMA and host copies.
  void *pin;
  CK(cuMemHostAlloc(&pin, N, 0));
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    CK(cuMemcpyDtoHAsync_v2(pin, dbuf[0], N, st[0]));
    CK(cuStreamSynchronize(st[0]));
    printf("pinned dtoh 64MiB %.3f ms\n", now() - t0);
  }
  char *dst = aligned_alloc(4096, N);
  memset(dst, 0, N);
  int ths[] = {1, 4, 8, 16, 32};
  for (int nt = 0; nt < 2; nt++)
    for (int i = 0; i < 5; i++) {
      double best = 1e9;
      for (int r = 0; r < 4; r++) {
        double t = par_copy(dst, pin, N, ths[i], nt);
        if (t < best) best = t;
      }
      printf("host copy pinned->pageable %d threads nt %d: %.3f ms (%.1f GB/s)\n", ths[i], nt, best, N / best / 1e6);
    }
  return 0;
}
