// The small formatter declared in format.h: one pass over the format string,
// each conversion rendered into its field (sign or prefix, zero padding,
// body, space padding) straight into the caller's buffer.

#include <executorch/examples/arm/cortex_m/format.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace {

// Appends to a caller buffer, counting what does not fit.
class Output {
 public:
  Output(char* buffer, size_t size) : buffer_(buffer), size_(size) {}

  void put(char c) {
    if (length_ + 1 < size_) {
      buffer_[length_] = c;
    }
    ++length_;
  }
  void put(const char* text, size_t length) {
    for (size_t i = 0; i < length; ++i) {
      put(text[i]);
    }
  }
  void repeat(char c, int count) {
    for (int i = 0; i < count; ++i) {
      put(c);
    }
  }
  // NUL-terminates (truncating if needed) and returns the untruncated length.
  int finish() {
    if (size_ > 0) {
      buffer_[length_ < size_ ? length_ : size_ - 1] = '\0';
    }
    return static_cast<int>(length_);
  }

 private:
  char* buffer_;
  size_t size_;
  size_t length_ = 0;
};

// One parsed conversion specification.
struct Spec {
  bool left = false; // '-'
  bool plus = false; // '+'
  bool space = false; // ' '
  bool alternate = false; // '#'
  bool zero = false; // '0'
  int width = 0;
  int precision = -1; // -1: not given
  char length = 0; // 'H' for hh, 'h', 'l', 'q' for ll, 'z', 'j', 't'
  char conversion = 0;
};

// Writes one field: [spaces][prefix][zeros][body][spaces], padded to the
// field width. `body` is produced by `emit_body(Output&)`, `body_length`
// bytes long.
template <typename EmitBody>
void emit_field(Output& out,
                const Spec& spec,
                const char* prefix,
                int leading_zeros,
                int body_length,
                bool zero_pad,
                EmitBody emit_body) {
  const int prefix_length = static_cast<int>(std::strlen(prefix));
  int padding =
      spec.width - prefix_length - leading_zeros - body_length;
  if (padding < 0) {
    padding = 0;
  }
  if (!spec.left && !zero_pad) {
    out.repeat(' ', padding);
  }
  out.put(prefix, static_cast<size_t>(prefix_length));
  out.repeat('0', leading_zeros + (!spec.left && zero_pad ? padding : 0));
  emit_body(out);
  if (spec.left) {
    out.repeat(' ', padding);
  }
}

const char* sign_prefix(const Spec& spec, bool negative) {
  return negative ? "-" : spec.plus ? "+" : spec.space ? " " : "";
}

void format_integer(Output& out,
                    const Spec& spec,
                    unsigned long long magnitude,
                    bool negative) {
  const char conversion = spec.conversion;
  const bool is_signed = conversion == 'd' || conversion == 'i';
  const unsigned base = (conversion == 'o') ? 8
                        : (conversion == 'x' || conversion == 'X' ||
                           conversion == 'p')
                            ? 16
                            : 10;
  const char* digit_chars =
      conversion == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";

  char reversed[24];
  int count = 0;
  for (unsigned long long v = magnitude; v != 0; v /= base) {
    reversed[count++] = digit_chars[v % base];
  }
  int min_digits = spec.precision >= 0 ? spec.precision : 1;
  if (conversion == 'o' && spec.alternate && min_digits <= count) {
    min_digits = count + 1; // "#o" guarantees a leading zero
  }
  const int leading_zeros = min_digits > count ? min_digits - count : 0;

  const char* prefix = "";
  if (is_signed) {
    prefix = sign_prefix(spec, negative);
  } else if (conversion == 'p' || (spec.alternate && magnitude != 0)) {
    prefix = conversion == 'X' ? "0X"
             : (conversion == 'x' || conversion == 'p') ? "0x"
                                                        : "";
  }
  emit_field(out,
             spec,
             prefix,
             leading_zeros,
             count,
             spec.zero && spec.precision < 0,
             [&](Output& o) {
               for (int i = count - 1; i >= 0; --i) {
                 o.put(reversed[i]);
               }
             });
}

// ---- floating point ----

constexpr int kMaxSignificantDigits = 17;

uint64_t power_of_ten(int exponent) {
  uint64_t result = 1;
  for (int i = 0; i < exponent; ++i) {
    result *= 10;
  }
  return result;
}

// 10^exponent for 0 <= exponent: exact up to 1e22, then the nearest product.
double double_power_of_ten(int exponent) {
  static const double kExact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,
                                  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
                                  1e18, 1e19, 1e20, 1e21, 1e22};
  double result = 1.0;
  while (exponent > 22) {
    result *= 1e22;
    exponent -= 22;
  }
  return result * kExact[exponent];
}

// value * 10^exponent with one rounding when |exponent| <= 22 (division by
// an exact power is correctly rounded, multiplication by 10^-k is not).
double scale_by_power_of_ten(double value, int exponent) {
  if (exponent >= 0) {
    // Split so that neither factor overflows for subnormal inputs.
    if (exponent > 300) {
      value *= double_power_of_ten(exponent - 300);
      exponent = 300;
    }
    return value * double_power_of_ten(exponent);
  }
  if (exponent < -300) {
    value /= double_power_of_ten(-exponent - 300);
    exponent = -300;
  }
  return value / double_power_of_ten(-exponent);
}

// Rounds a non-negative double below 2^63 to an integer, ties to even.
uint64_t round_half_even(double x) {
  uint64_t n = static_cast<uint64_t>(x);
  const double fraction = x - static_cast<double>(n);
  if (fraction > 0.5 || (fraction == 0.5 && (n & 1) != 0)) {
    ++n;
  }
  return n;
}

// floor(log10(value)) for a positive finite value, possibly off by a few
// (callers correct it): log10(2) ~= 78913 / 2^18 applied to the binary
// exponent.
int estimate_decimal_exponent(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const int binary_exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  const long scaled = static_cast<long>(binary_exponent) * 78913;
  return static_cast<int>(scaled >= 0 ? scaled >> 18
                                      : -((-scaled + 262143) >> 18));
}

// Decimal digits of a positive finite value: digits[0..count) with the
// first digit worth 10^exponent.
struct Decimal {
  char digits[kMaxSignificantDigits];
  int count = 0;
  int exponent = 0;

  // digits[i] for any i: '0' past either end.
  char at(int i) const {
    return (i >= 0 && i < count) ? digits[i] : '0';
  }
};

// Rounds `value` (positive, finite) to `count` significant digits
// (1..kMaxSignificantDigits).
Decimal round_significant(double value, int count) {
  Decimal result;
  result.count = count;
  int exponent = estimate_decimal_exponent(value);
  const uint64_t low = power_of_ten(count - 1);
  const uint64_t high = low * 10;
  uint64_t n = 0;
  // The estimate is within a few decades (more for subnormals); each step
  // moves one decade.
  for (int step = 0; step < 64; ++step) {
    n = round_half_even(scale_by_power_of_ten(value, count - 1 - exponent));
    if (n >= high) {
      ++exponent;
    } else if (n < low) {
      --exponent;
    } else {
      break;
    }
  }
  for (int i = count - 1; i >= 0; --i) {
    result.digits[i] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  result.exponent = exponent;
  return result;
}

// Rounds `value` (non-negative, finite) to `precision` digits after the
// point.
Decimal round_fixed(double value, int precision) {
  Decimal result;
  if (value == 0.0) {
    return result; // no digits: every position reads '0'
  }
  const Decimal probe = round_significant(value, kMaxSignificantDigits);
  const int count = probe.exponent + 1 + precision;
  if (count > kMaxSignificantDigits) {
    return probe; // further digits print as zeros
  }
  if (count >= 1) {
    return round_significant(value, count);
  }
  // Below half a unit of the last place it rounds to zero; a value that
  // rounds up to one unit has count == 0 (it is at least 0.1 units).
  if (count == 0 &&
      round_half_even(scale_by_power_of_ten(value, precision)) == 1) {
    result.digits[0] = '1';
    result.count = 1;
    result.exponent = -precision;
  }
  return result;
}

// Fixed notation: integer digits, then '.' and `precision` digits.
int fixed_length(const Decimal& d, int precision, bool point) {
  const int integer_digits =
      d.count > 0 && d.exponent >= 0 ? d.exponent + 1 : 1;
  return integer_digits + (point ? 1 + precision : 0);
}

void emit_fixed(Output& out, const Decimal& d, int precision, bool point) {
  if (d.count > 0 && d.exponent >= 0) {
    for (int i = 0; i <= d.exponent; ++i) {
      out.put(d.at(i));
    }
  } else {
    out.put('0');
  }
  if (point) {
    out.put('.');
    for (int j = 0; j < precision; ++j) {
      // Fraction digit j is worth 10^-(j+1), i.e. index exponent + 1 + j.
      out.put(d.count > 0 ? d.at(d.exponent + 1 + j) : '0');
    }
  }
}

// Exponent notation: one digit, '.', `precision` digits, e, sign, >= 2
// exponent digits.
int exponent_digits(int exponent) {
  int magnitude = exponent < 0 ? -exponent : exponent;
  int digits = 2;
  for (int limit = 100; magnitude >= limit; limit *= 10) {
    ++digits;
  }
  return digits;
}

int scientific_length(const Decimal& d, int precision, bool point) {
  return 1 + (point ? 1 + precision : 0) + 2 + exponent_digits(d.exponent);
}

void emit_scientific(Output& out,
                     const Decimal& d,
                     int precision,
                     bool point,
                     bool upper) {
  out.put(d.at(0));
  if (point) {
    out.put('.');
    for (int j = 1; j <= precision; ++j) {
      out.put(d.at(j));
    }
  }
  out.put(upper ? 'E' : 'e');
  out.put(d.exponent < 0 ? '-' : '+');
  const int magnitude = d.exponent < 0 ? -d.exponent : d.exponent;
  const int digits = exponent_digits(d.exponent);
  int divisor = 1;
  for (int i = 1; i < digits; ++i) {
    divisor *= 10;
  }
  for (; divisor > 0; divisor /= 10) {
    out.put(static_cast<char>('0' + (magnitude / divisor) % 10));
  }
}

void format_floating(Output& out, const Spec& spec, double value) {
  const char conversion = spec.conversion;
  const bool upper =
      conversion == 'F' || conversion == 'E' || conversion == 'G';
  const bool negative = __builtin_signbit(value);
  const double magnitude = negative ? -value : value;
  const char* prefix = sign_prefix(spec, negative);

  if (__builtin_isnan(value) || __builtin_isinf(value)) {
    const char* text = __builtin_isnan(value) ? (upper ? "NAN" : "nan")
                                              : (upper ? "INF" : "inf");
    emit_field(out, spec, prefix, 0, 3, false, [&](Output& o) {
      o.put(text, 3);
    });
    return;
  }

  int precision = spec.precision >= 0 ? spec.precision : 6;
  const bool zero_pad = spec.zero;
  bool scientific = conversion == 'e' || conversion == 'E';
  Decimal decimal;
  if (conversion == 'g' || conversion == 'G') {
    // %g: P significant digits, fixed when -4 <= X < P (X the exponent
    // after rounding), trailing zeros dropped unless '#'.
    const int significant = precision == 0 ? 1 : precision;
    int exponent = 0;
    if (magnitude != 0.0) {
      const int count = significant < kMaxSignificantDigits
                            ? significant
                            : kMaxSignificantDigits;
      decimal = round_significant(magnitude, count);
      exponent = decimal.exponent;
    }
    scientific = !(exponent >= -4 && exponent < significant);
    precision = scientific ? significant - 1 : significant - 1 - exponent;
    if (!spec.alternate) {
      while (precision > 0 &&
             (scientific ? decimal.at(precision)
                         : decimal.at(decimal.exponent + precision)) == '0') {
        --precision;
      }
    }
  } else if (scientific) {
    if (magnitude != 0.0) {
      const int count = precision + 1 < kMaxSignificantDigits
                            ? precision + 1
                            : kMaxSignificantDigits;
      decimal = round_significant(magnitude, count);
    }
  } else {
    decimal = round_fixed(magnitude, precision);
  }

  const bool point = precision > 0 || spec.alternate;
  if (scientific) {
    emit_field(out,
               spec,
               prefix,
               0,
               scientific_length(decimal, precision, point),
               zero_pad,
               [&](Output& o) {
                 emit_scientific(o, decimal, precision, point, upper);
               });
  } else {
    emit_field(out,
               spec,
               prefix,
               0,
               fixed_length(decimal, precision, point),
               zero_pad,
               [&](Output& o) { emit_fixed(o, decimal, precision, point); });
  }
}

// ---- the format string ----

// Parses flags, width, precision and length at `*format` (after the '%').
Spec parse_spec(const char*& format, va_list& args) {
  Spec spec;
  for (;; ++format) {
    const char c = *format;
    if (c == '-') {
      spec.left = true;
    } else if (c == '+') {
      spec.plus = true;
    } else if (c == ' ') {
      spec.space = true;
    } else if (c == '#') {
      spec.alternate = true;
    } else if (c == '0') {
      spec.zero = true;
    } else {
      break;
    }
  }
  if (*format == '*') {
    spec.width = va_arg(args, int);
    if (spec.width < 0) {
      spec.left = true;
      spec.width = -spec.width;
    }
    ++format;
  } else {
    while (*format >= '0' && *format <= '9') {
      spec.width = spec.width * 10 + (*format++ - '0');
    }
  }
  if (*format == '.') {
    ++format;
    spec.precision = 0;
    if (*format == '*') {
      spec.precision = va_arg(args, int);
      if (spec.precision < 0) {
        spec.precision = -1; // a negative precision counts as omitted
      }
      ++format;
    } else {
      while (*format >= '0' && *format <= '9') {
        spec.precision = spec.precision * 10 + (*format++ - '0');
      }
    }
  }
  switch (*format) {
    case 'h':
      spec.length = (format[1] == 'h') ? (++format, 'H') : 'h';
      ++format;
      break;
    case 'l':
      spec.length = (format[1] == 'l') ? (++format, 'q') : 'l';
      ++format;
      break;
    case 'z':
    case 'j':
    case 't':
    case 'L':
      spec.length = *format++;
      break;
    default:
      break;
  }
  spec.conversion = *format;
  return spec;
}

long long signed_argument(const Spec& spec, va_list& args) {
  switch (spec.length) {
    case 'H':
      return static_cast<signed char>(va_arg(args, int));
    case 'h':
      return static_cast<short>(va_arg(args, int));
    case 'l':
      return va_arg(args, long);
    case 'q':
      return va_arg(args, long long);
    case 'z':
      return va_arg(args, std::make_signed_t<size_t>);
    case 'j':
      return va_arg(args, intmax_t);
    case 't':
      return va_arg(args, ptrdiff_t);
    default:
      return va_arg(args, int);
  }
}

unsigned long long unsigned_argument(const Spec& spec, va_list& args) {
  switch (spec.length) {
    case 'H':
      return static_cast<unsigned char>(va_arg(args, unsigned));
    case 'h':
      return static_cast<unsigned short>(va_arg(args, unsigned));
    case 'l':
      return va_arg(args, unsigned long);
    case 'q':
      return va_arg(args, unsigned long long);
    case 'z':
      return va_arg(args, size_t);
    case 'j':
      return va_arg(args, uintmax_t);
    case 't':
      return va_arg(args, std::make_unsigned_t<ptrdiff_t>);
    default:
      return va_arg(args, unsigned);
  }
}

void format_string(Output& out, const Spec& spec, const char* text) {
  if (text == nullptr) {
    text = "(null)";
  }
  // Never reads past `precision` bytes: the text need not be terminated.
  size_t length = 0;
  while ((spec.precision < 0 || length < static_cast<size_t>(spec.precision)) &&
         text[length] != '\0') {
    ++length;
  }
  emit_field(out, spec, "", 0, static_cast<int>(length), false, [&](Output& o) {
    o.put(text, length);
  });
}

} // namespace

extern "C" int et_vsnprintf(char* buffer,
                            size_t size,
                            const char* format,
                            va_list caller_args) {
  Output out(buffer, size);
  va_list args;
  va_copy(args, caller_args);
  while (*format != '\0') {
    if (*format != '%') {
      out.put(*format++);
      continue;
    }
    ++format;
    const Spec spec = parse_spec(format, args);
    switch (spec.conversion) {
      case 'd':
      case 'i': {
        const long long value = signed_argument(spec, args);
        const unsigned long long magnitude =
            value < 0 ? 0ULL - static_cast<unsigned long long>(value)
                      : static_cast<unsigned long long>(value);
        format_integer(out, spec, magnitude, value < 0);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X':
        format_integer(out, spec, unsigned_argument(spec, args), false);
        break;
      case 'p':
        format_integer(out,
                       spec,
                       reinterpret_cast<uintptr_t>(va_arg(args, void*)),
                       false);
        break;
      case 'c': {
        const char c = static_cast<char>(va_arg(args, int));
        emit_field(out, spec, "", 0, 1, false, [&](Output& o) { o.put(c); });
        break;
      }
      case 's':
        format_string(out, spec, va_arg(args, const char*));
        break;
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        format_floating(out, spec, va_arg(args, double));
        break;
      case '%':
        out.put('%');
        break;
      case '\0':
        // A lone '%' at the end: nothing to convert.
        va_end(args);
        return out.finish();
      default:
        // Unknown conversion (and %n, which writes memory): shown as is.
        out.put('%');
        out.put(spec.conversion);
        break;
    }
    ++format;
  }
  va_end(args);
  return out.finish();
}

extern "C" int et_snprintf(char* buffer, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int length = et_vsnprintf(buffer, size, format, args);
  va_end(args);
  return length;
}
