// fmt's compiled part, built once for every program here.
//
// Debian's fmt ships its implementation as headers, and its shared library. Built header-only
// (FMT_HEADER_ONLY), each file that includes <fmt/format.h> compiled the whole implementation
// again: `node_cancel.cc` took 13.2 s at -O2 with it and 6.5 s without (docs/build-time.md).
// The shared library would make every program need libfmt at run time, and the programs run
// unchanged on machines without it (CMakeLists.txt, PINPOINT_STATIC_RUNTIME). So fmt's own
// implementation header is compiled here, once, and linked statically like the rest of pp_common.
#include <fmt/format-inl.h>
#include <fmt/format.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// What <fmt/format.h> declares `extern template` when fmt is not header-only.
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl<wchar_t>(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto decimal_point_impl<wchar_t>(locale_ref) -> wchar_t;
}  // namespace detail
FMT_END_NAMESPACE
