#pragma once

// A count known at run time, given to kernels that take it as a template
// argument (the input rows of a decode product kept in registers).

#include <cstdint>
#include <type_traits>
#include <utility>

namespace quire::kernels::linear_detail {

// Calls kernel(std::integral_constant<int, N>{}) for the N in [1, Max] that
// equals n; Max for any larger n.
template <int Max, typename Kernel>
void with_count(std::int64_t n, Kernel&& kernel) {
  [&]<int... N>(std::integer_sequence<int, N...>) {
    ((n == N + 1 || N + 1 == Max ? (kernel(std::integral_constant<int, N + 1>{}), true) : false) ||
     ...);
  }
  (std::make_integer_sequence<int, Max>{});
}

}  // namespace quire::kernels::linear_detail
