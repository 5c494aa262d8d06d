// The detection benchmark's bug shapes (bench/detection/score.mjs): each
// function reproduces, in a few lines written here, the shape of a memory
// bug that a published project fixed (the fix each one mirrors is named in
// SHAPES in score.mjs). Every one runs silently without mate-guard: the
// bad access lands in memory the process owns.
#include <node_api.h>

#include <stdio.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace {

volatile uint64_t g_sink;  // keeps reads from being optimised away

napi_value Num(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

// The first argument's bytes (a Buffer).
unsigned char* BufferArg(napi_env env, napi_callback_info info, size_t* len, size_t index = 0) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, nullptr, nullptr);
  void* data = nullptr;
  napi_get_buffer_info(env, args[index], &data, len);
  return static_cast<unsigned char*>(data);
}

// A UTF-8 decoder that takes the sequence width from the lead byte and
// reads the continuation bytes without checking the length left (a
// truncated lead byte at the end reads 1-3 bytes past the buffer).
__attribute__((noinline)) uint32_t DecodeUtf8(const unsigned char* s, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i < len;) {
    unsigned char c = s[i];
    size_t width = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = c;
    for (size_t k = 1; k < width; k++) cp = (cp << 6) | (s[i + k] & 0x3F);  // the bug: i + k may be >= len
    sum += cp;
    i += width;
  }
  return sum;
}

napi_value Utf8TruncatedLead(napi_env env, napi_callback_info info) {
  size_t len;
  unsigned char* s = BufferArg(env, info, &len);
  return Num(env, DecodeUtf8(s, len));
}

// Blocks that stay allocated for the rest of the process (a cache).
std::vector<void*> g_neighbours;

// A CBOR-style extractor that trusts a string's length prefix: the copy
// reads past the end of a short input.
napi_value CborLengthOverread(napi_env env, napi_callback_info info) {
  size_t len;
  unsigned char* s = BufferArg(env, info, &len);
  size_t claimed = s[0];  // the header says how long the string is
  unsigned char out[256];
  memcpy(out, s + 1, claimed);  // the bug: claimed > len - 1
  g_sink = out[claimed - 1];
  return Num(env, static_cast<double>(claimed));
}

// A box/seal binding that writes the MAC after the ciphertext into an
// output buffer sized for the message only (16 bytes short).
napi_value SealOutputTooSmall(napi_env env, napi_callback_info info) {
  size_t len;
  unsigned char* out = BufferArg(env, info, &len);
  for (size_t i = 0; i < len; i++) out[i] ^= 0x5A;                               // "ciphertext"
  for (size_t i = 0; i < 16; i++) out[len + i] = static_cast<unsigned char>(i);  // the bug: the MAC past the end
  return Num(env, static_cast<double>(len));
}

// A copy of a string into malloc(strlen(s)): the terminator lands one
// byte past the block.
char g_token[] = "session-token-abcdefghi";  // 23 characters

__attribute__((noinline)) char* CopyName(const char* name) {
  char* copy = static_cast<char*>(malloc(strlen(name)));  // the bug: no room for the NUL
  strcpy(copy, name);
  return copy;
}

napi_value NulTerminatorOffByOne(napi_env env, napi_callback_info) {
  char* copy = CopyName(g_token);
  asm volatile("" : : "r"(copy) : "memory");  // the copy is used (a test would compare it)
  g_sink = static_cast<unsigned char>(copy[0]);
  free(copy);
  return Num(env, 23);
}

// An index keyed by handle; remove reads the node it just erased.
std::unordered_map<size_t, size_t> g_index;

napi_value MapEraseThenRead(napi_env env, napi_callback_info) {
  for (size_t i = 0; i < 64; i++) g_index[i] = i * 10;
  auto it = g_index.find(7);
  g_index.erase(it);
  size_t v = it->second;  // the bug: `it` was invalidated by erase
  g_sink = v;
  return Num(env, static_cast<double>(v));
}

// A reference into a vector of handlers kept across a callback that
// registers another handler (push_back reallocates): the read after the
// callback goes to the old buffer.
std::vector<uint64_t> g_handlers;

__attribute__((noinline)) void Callback() {
  for (int i = 0; i < 100; i++) g_handlers.push_back(i);  // re-entrant registration grows the vector
}

napi_value ReentrantVectorGrowth(napi_env env, napi_callback_info) {
  g_handlers.assign(4, 1);
  const uint64_t& current = g_handlers[3];
  Callback();
  g_sink = current;  // the bug: `current` refers to the freed buffer
  return Num(env, static_cast<double>(g_handlers.size()));
}

// An error path frees the result and the caller's cleanup frees it again.
__attribute__((noinline)) int Convert(char** result) {
  *result = static_cast<char*>(malloc(64));
  memset(*result, 'x', 63);
  (*result)[63] = '\0';
  free(*result);  // the conversion failed: the buffer is freed...
  return -1;      // ...but *result is not cleared
}

napi_value DoubleFreeErrorPath(napi_env env, napi_callback_info) {
  char* result = nullptr;
  int rc = Convert(&result);
  // Meanwhile the block is handed out again (malloc reuses it at once)...
  char* other = static_cast<char*>(malloc(64));
  g_neighbours.push_back(other);
  free(result);  // ...so the bug, the second free, frees someone else's block
  return Num(env, rc);
}

// A search with a "last position" index that goes to -1 on an empty match.
napi_value NegativeIndexWrite(napi_env env, napi_callback_info) {
  int* table = static_cast<int*>(malloc(48 * sizeof(int)));
  memset(table, 0, 48 * sizeof(int));
  long pos = 0;                                // nothing matched: the window starts at pos - 3
  table[pos - 3] = 7;                          // the bug: writes before the block
  asm volatile("" : : "r"(table) : "memory");  // the table is used afterwards
  g_sink = static_cast<uint64_t>(table[0]);
  free(table);
  return Num(env, 0);
}

// A binding that keeps the data pointer of a Buffer it was given (no
// reference to the Buffer) and writes to it in a later call.
unsigned char* g_kept = nullptr;
size_t g_kept_len = 0;

napi_value KeepBufferPointer(napi_env env, napi_callback_info info) {
  g_kept = BufferArg(env, info, &g_kept_len);  // the bug: no napi_ref keeps the Buffer alive
  return Num(env, static_cast<double>(g_kept_len));
}

napi_value WriteKeptPointer(napi_env env, napi_callback_info) {
  for (size_t i = 64; i < g_kept_len; i++) g_kept[i] = 1;  // the Buffer may be gone (its header kept)
  return Num(env, static_cast<double>(g_kept_len));
}

// A copy sized by the source (a 104-byte record) instead of the 96-byte
// destination.
napi_value MemcpyWrongLength(napi_env env, napi_callback_info) {
  unsigned char source[104];
  memset(source, 3, sizeof(source));
  unsigned char* dest = static_cast<unsigned char*>(malloc(96));
  memcpy(dest, source, sizeof(source));       // the bug: sizeof(source) > 96
  asm volatile("" : : "r"(dest) : "memory");  // the copy is used afterwards
  g_sink = dest[0];
  free(dest);
  return Num(env, 96);
}

// A checksum over a fixed-width field of a short record.
napi_value FixedWidthOverread(napi_env env, napi_callback_info) {
  unsigned char* record = static_cast<unsigned char*>(malloc(40));
  memset(record, 7, 40);
  uint64_t sum = 0;
  for (size_t i = 0; i < 96; i++) sum += record[i];  // the bug: the record has 40 bytes
  g_sink = sum;
  free(record);
  return Num(env, static_cast<double>(sum));
}

// A size computed in 16 bits: width * height wraps, the fill does not.
napi_value SizeOverflowWrap(napi_env env, napi_callback_info) {
  uint16_t width = 472, height = 1806;
  uint16_t bytes = static_cast<uint16_t>(width * height);  // the bug: 852432 wraps to 464
  unsigned char* pixels = static_cast<unsigned char*>(malloc(bytes));
  for (uint32_t i = 0; i < width; i++) pixels[i] = 0xFF;  // the first row already runs past
  g_sink = pixels[0];
  free(pixels);
  return Num(env, bytes);
}

// A pointer kept across a realloc that moved the block.
napi_value ReallocStalePointer(napi_env env, napi_callback_info) {
  char* buf = static_cast<char*>(malloc(32));
  memset(buf, 'a', 32);
  char* old = buf;
  buf = static_cast<char*>(realloc(buf, 64 * 1024));  // moves
  old[20] = 'b';                                      // the bug: writes through the old pointer
  g_sink = static_cast<unsigned char>(buf[0]);
  free(buf);
  return Num(env, 0);
}

// A length field read one element past an array of records (an off-by-one
// loop bound: i <= count).
napi_value LoopBoundOffByOne(napi_env env, napi_callback_info) {
  const size_t count = 8;
  uint64_t* lengths = static_cast<uint64_t*>(malloc(count * sizeof(uint64_t)));
  for (size_t i = 0; i < count; i++) lengths[i] = i;
  uint64_t total = 0;
  for (size_t i = 0; i <= count; i++) total += lengths[i];  // the bug: i <= count
  g_sink = total;
  free(lengths);
  return Num(env, static_cast<double>(total));
}

// A line read by getline (libc allocates the buffer: not the module's own
// allocation, so never a guarded one) is freed on a cleanup path, then its
// newline stripped through the stale pointer.
napi_value ForeignFreeThenWrite(napi_env env, napi_callback_info) {
  static char text[] = "a config line long enough to pass glibc's list words\n";
  FILE* f = fmemopen(text, sizeof(text) - 1, "r");
  char* line = nullptr;
  size_t cap = 0;
  ssize_t n = getline(&line, &cap, f);
  fclose(f);
  free(line);                      // the cleanup path
  if (n > 40) line[n - 1] = '\0';  // the bug: the line was freed
  return Num(env, static_cast<double>(n));
}

void Define(napi_env env, napi_value exports, const char* name, napi_callback cb) {
  napi_value f;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, nullptr, &f);
  napi_set_named_property(env, exports, name, f);
}

}  // namespace

NAPI_MODULE_INIT() {
  Define(env, exports, "utf8TruncatedLead", Utf8TruncatedLead);
  Define(env, exports, "cborLengthOverread", CborLengthOverread);
  Define(env, exports, "sealOutputTooSmall", SealOutputTooSmall);
  Define(env, exports, "nulTerminatorOffByOne", NulTerminatorOffByOne);
  Define(env, exports, "mapEraseThenRead", MapEraseThenRead);
  Define(env, exports, "reentrantVectorGrowth", ReentrantVectorGrowth);
  Define(env, exports, "doubleFreeErrorPath", DoubleFreeErrorPath);
  Define(env, exports, "negativeIndexWrite", NegativeIndexWrite);
  Define(env, exports, "keepBufferPointer", KeepBufferPointer);
  Define(env, exports, "writeKeptPointer", WriteKeptPointer);
  Define(env, exports, "memcpyWrongLength", MemcpyWrongLength);
  Define(env, exports, "fixedWidthOverread", FixedWidthOverread);
  Define(env, exports, "sizeOverflowWrap", SizeOverflowWrap);
  Define(env, exports, "reallocStalePointer", ReallocStalePointer);
  Define(env, exports, "loopBoundOffByOne", LoopBoundOffByOne);
  Define(env, exports, "foreignFreeThenWrite", ForeignFreeThenWrite);
  return exports;
}
