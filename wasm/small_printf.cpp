// snprintf for the WebAssembly module, integers and strings only. What calls it in the module:
// nlohmann/json's "\u%04x" escapes and "<U+%.4X>" token text, and libc++'s integer std::to_string;
// the engine formats its numbers with fmt. musl's snprintf goes through vsnprintf and the FILE
// machinery of vfprintf: 0.6 KB of brotli of a first visit that has none to spare (issue 12's
// 300 KB; vfprintf itself stays, for the C++ runtime's abort messages). A conversion this file
// does not know (%f, %g, %e, %a, %n) writes nothing and returns -1, as a C library does on an
// encoding error: never a silently wrong number.
#include <cstdarg>
#include <cstddef>
#include <cstdint>

namespace {

struct Out {
  char* buf;
  size_t cap;  // bytes that may be written, the terminating zero included
  size_t len = 0;
  void put(char c) {
    if (len + 1 < cap) buf[len] = c;
    ++len;
  }
};

// One integer conversion: `value` in `base`, at least `precision` digits, padded to `width`.
void put_integer(Out& o, uintmax_t value, bool negative, unsigned base, bool upper, int width,
                 int precision, bool zero_pad, bool left) {
  char digits[64];
  int n = 0;
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  while (value) {
    digits[n++] = set[value % base];
    value /= base;
  }
  if (precision < 0 && n == 0) digits[n++] = '0';
  while (n < precision) digits[n++] = '0';
  const int body = n + (negative ? 1 : 0);
  const int pad = width > body ? width - body : 0;
  if (!left && !(zero_pad && precision < 0))
    for (int i = 0; i < pad; ++i) o.put(' ');
  if (negative) o.put('-');
  if (!left && zero_pad && precision < 0)
    for (int i = 0; i < pad; ++i) o.put('0');
  while (n) o.put(digits[--n]);
  if (left)
    for (int i = 0; i < pad; ++i) o.put(' ');
}

}  // namespace

static int format_to(char* buf, size_t size, const char* format, va_list args) {
  Out o{buf, size};
  for (const char* p = format; *p; ++p) {
    if (*p != '%') {
      o.put(*p);
      continue;
    }
    bool zero_pad = false, left = false;
    for (++p; *p == '0' || *p == '-'; ++p) (*p == '0' ? zero_pad : left) = true;
    int width = 0, precision = -1;
    if (*p == '*') width = va_arg(args, int), ++p;
    for (; *p >= '0' && *p <= '9'; ++p) width = width * 10 + (*p - '0');
    if (*p == '.') {
      precision = 0;
      if (*++p == '*') precision = va_arg(args, int), ++p;
      for (; *p >= '0' && *p <= '9'; ++p) precision = precision * 10 + (*p - '0');
    }
    int longs = 0;  // 0 int, 1 long, 2 long long (h and hh read an int, promoted)
    for (; *p == 'l' || *p == 'h' || *p == 'z' || *p == 'j' || *p == 't'; ++p)
      if (*p != 'h') longs += *p == 'l' ? 1 : 2;
    auto signed_arg = [&]() -> intmax_t {
      return longs >= 2 ? va_arg(args, long long) : longs ? va_arg(args, long) : va_arg(args, int);
    };
    auto unsigned_arg = [&]() -> uintmax_t {
      return longs >= 2 ? va_arg(args, unsigned long long)
             : longs    ? va_arg(args, unsigned long)
                        : va_arg(args, unsigned);
    };
    switch (*p) {
      case 'd':
      case 'i': {
        const intmax_t v = signed_arg();
        put_integer(o, v < 0 ? 0 - static_cast<uintmax_t>(v) : static_cast<uintmax_t>(v), v < 0,
                    10, false, width, precision, zero_pad, left);
        break;
      }
      case 'u': put_integer(o, unsigned_arg(), false, 10, false, width, precision, zero_pad, left); break;
      case 'o': put_integer(o, unsigned_arg(), false, 8, false, width, precision, zero_pad, left); break;
      case 'x':
      case 'X':
        put_integer(o, unsigned_arg(), false, 16, *p == 'X', width, precision, zero_pad, left);
        break;
      case 'p':
        o.put('0'), o.put('x');
        put_integer(o, reinterpret_cast<uintptr_t>(va_arg(args, void*)), false, 16, false, 0, -1,
                    false, false);
        break;
      case 'c': o.put(static_cast<char>(va_arg(args, int))); break;
      case 's': {
        const char* s = va_arg(args, const char*);
        for (int i = 0; s[i] && (precision < 0 || i < precision); ++i) o.put(s[i]);
        break;
      }
      case '%': o.put('%'); break;
      default:
        if (size) buf[0] = '\0';
        return -1;
    }
  }
  if (size) buf[o.len < size ? o.len : size - 1] = '\0';
  return static_cast<int>(o.len);
}

extern "C" int snprintf(char* buf, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = format_to(buf, size, format, args);
  va_end(args);
  return n;
}
