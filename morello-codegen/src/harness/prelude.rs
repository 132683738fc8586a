//! The C text every harness starts with: feature macros, headers, and small helpers (aligned
//! allocation, page mappings, the seeded generator, raw file I/O, a monotonic clock, evicting a
//! buffer from the caches, CPU pinning and OpenMP thread binding).
//!
//! It comes *before* the kernel's translation unit so `_GNU_SOURCE` is defined before any libc
//! header. Every helper is `static` and marked unused, so a harness that needs only some of them
//! compiles without warnings under `-Wall -Wextra` on gcc and clang. The generator mirrors
//! [`super::Buffer::from_seed`] bit for bit.

/// Alignment of every harness buffer, in bytes (at least a cache line; two lines so that
/// adjacent-line prefetching never straddles buffers).
pub const BUFFER_ALIGNMENT: usize = 128;

/// The prelude. `{ALIGN}` is replaced by [`BUFFER_ALIGNMENT`] in [`prelude`].
const PRELUDE: &str = r#"/* ---- morello harness prelude: headers and helpers ---- */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the morello harness exchanges little-endian files and needs a little-endian host"
#endif

#define MORELLO_ALIGNMENT {ALIGN}
#define MORELLO_HELPER static __attribute__((unused))

/* A zeroed buffer aligned to MORELLO_ALIGNMENT bytes; exits with status 3 when out of memory. */
MORELLO_HELPER void *morello_alloc(size_t bytes) {
  size_t rounded = (bytes + MORELLO_ALIGNMENT - 1) / MORELLO_ALIGNMENT * MORELLO_ALIGNMENT;
  void *data = aligned_alloc(MORELLO_ALIGNMENT, rounded);
  if (data == NULL) {
    fprintf(stderr, "morello: cannot allocate %zu bytes\n", bytes);
    exit(3);
  }
  memset(data, 0, rounded);
  return data;
}

/* `bytes` zeroed bytes of pages of their own (`mmap`), starting on a page; exits with status 3
   when out of memory. The benchmark places its buffers in such mappings itself, so that what the
   program's libraries allocated before `main` cannot move them within a page. */
MORELLO_HELPER unsigned char *morello_map(size_t bytes) {
  void *data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED) {
    fprintf(stderr, "morello: cannot map %zu bytes\n", bytes);
    exit(3);
  }
  return (unsigned char *)data;
}

/* splitmix64; one stream per parameter (see Buffer::from_seed on the Rust side). */
MORELLO_HELPER uint64_t morello_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

MORELLO_HELPER uint64_t morello_stream(uint64_t seed, size_t param_index) {
  return seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(param_index + 1));
}

/* A multiple of 1/16 in [-2, 1.9375]: exact in f32 and bf16. */
MORELLO_HELPER float morello_seeded_f32(uint64_t r) {
  return (float)((int)(r >> 58) - 32) / 16.0f;
}

#define MORELLO_DEFINE_FILL(suffix, type, convert)                                  \
  MORELLO_HELPER void morello_fill_##suffix(type *data, size_t n, uint64_t seed,   \
                                            size_t param_index) {                   \
    uint64_t state = morello_stream(seed, param_index);                             \
    for (size_t i = 0; i < n; i++) {                                                \
      uint64_t r = morello_splitmix64(&state);                                      \
      data[i] = convert;                                                            \
    }                                                                               \
  }

MORELLO_HELPER uint16_t morello_seeded_bf16(uint64_t r) {
  float value = morello_seeded_f32(r);
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  return (uint16_t)(bits >> 16);
}

MORELLO_DEFINE_FILL(f32, float, morello_seeded_f32(r))
MORELLO_DEFINE_FILL(u32, uint32_t, (uint32_t)r)
MORELLO_DEFINE_FILL(i32, int32_t, (int32_t)(uint32_t)r)
MORELLO_DEFINE_FILL(u16, uint16_t, (uint16_t)r)
MORELLO_DEFINE_FILL(i16, int16_t, (int16_t)(uint16_t)r)
MORELLO_DEFINE_FILL(u8, uint8_t, (uint8_t)r)
MORELLO_DEFINE_FILL(i8, int8_t, (int8_t)(uint8_t)r)
MORELLO_DEFINE_FILL(bf16, uint16_t, morello_seeded_bf16(r))

/* Reads exactly `bytes` bytes from `path`; 0 on success, else a message on stderr and -1. */
MORELLO_HELPER int morello_read_file(const char *path, void *data, size_t bytes) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) {
    fprintf(stderr, "morello: cannot open %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t got = fread(data, 1, bytes, file);
  int extra = fgetc(file);
  fclose(file);
  if (got != bytes || extra != EOF) {
    fprintf(stderr, "morello: %s must hold exactly %zu bytes\n", path, bytes);
    return -1;
  }
  return 0;
}

/* Writes `bytes` bytes to `path`; 0 on success, else a message on stderr and -1. */
MORELLO_HELPER int morello_write_file(const char *path, const void *data, size_t bytes) {
  FILE *file = fopen(path, "wb");
  if (file == NULL) {
    fprintf(stderr, "morello: cannot create %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t put = fwrite(data, 1, bytes, file);
  if (fclose(file) != 0 || put != bytes) {
    fprintf(stderr, "morello: cannot write %s\n", path);
    return -1;
  }
  return 0;
}

/* Seconds on the monotonic clock. */
MORELLO_HELPER double morello_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Whether this host can evict a buffer from its caches (morello_evict): x86-64 only. */
#if defined(__x86_64__)
#define MORELLO_CAN_EVICT 1
#else
#define MORELLO_CAN_EVICT 0
#endif

/* Writes back and drops from every cache level each 64-byte line of `bytes` bytes at `data`
   (`clflush`), then waits until that is done (`mfence`): the next access to the buffer comes from
   main memory. Does nothing where MORELLO_CAN_EVICT is 0. */
MORELLO_HELPER void morello_evict(const void *data, size_t bytes) {
#if MORELLO_CAN_EVICT
  for (size_t at = 0; at < bytes; at += 64) __builtin_ia32_clflush((const char *)data + at);
  __builtin_ia32_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

/* Pins the calling thread (and threads it creates later) to one CPU; 0 on success. */
MORELLO_HELPER int morello_pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    fprintf(stderr, "morello: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
    return -1;
  }
  return 0;
}

/* Binds thread i of an OpenMP team of `count` threads to `cpus[i]` (the runtime keeps its
   threads, so later teams of that size run bound); threads that libraries start themselves keep
   their CPUs. 0 on success, and without OpenMP, where there is nothing to bind. */
MORELLO_HELPER int morello_bind_openmp_threads(const int *cpus, int count) {
#ifdef _OPENMP
  int failed = 0;
#pragma omp parallel num_threads(count) reduction(| : failed)
  {
    int thread = omp_get_thread_num();
    failed |= omp_get_num_threads() != count || morello_pin_to_cpu(cpus[thread]) != 0;
  }
  if (failed) {
    fprintf(stderr, "morello: cannot bind %d OpenMP threads to their CPUs\n", count);
    return -1;
  }
#else
  (void)cpus;
  (void)count;
#endif
  return 0;
}
/* ---- end of the morello harness prelude ---- */
"#;

/// The prelude text.
pub(crate) fn prelude() -> String {
    PRELUDE.replace("{ALIGN}", &BUFFER_ALIGNMENT.to_string())
}

/// The suffix of the prelude's fill function for a type: `morello_fill_<suffix>`.
pub(crate) fn fill_function(c_type: super::CType) -> String {
    format!("morello_fill_{}", c_type.name())
}
