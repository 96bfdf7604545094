// C support of MotionRecordingFormats: the system zlib (inflate of zip entries) and glibc's strtod_l
// (correctly rounded decimal parsing in the C locale, whatever the process locale).
#ifndef C_RECORDING_SUPPORT_H
#define C_RECORDING_SUPPORT_H
#include <locale.h>
#include <stdlib.h>
#include <zlib.h>

// Declared by <stdlib.h> only under _GNU_SOURCE, which Swift's Glibc module does not set.
extern double strtod_l(const char *__restrict nptr, char **__restrict endptr, locale_t loc);

/// A locale whose numeric category is "C" (decimal point '.'), for strtod_l.
static inline locale_t crs_numeric_c_locale(void) { return newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/// inflateInit2 for raw deflate data (zip entries): the macro is not visible to Swift.
static inline int crs_inflate_init_raw(z_stream *stream) { return inflateInit2(stream, -15); }
#endif
