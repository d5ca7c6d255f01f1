#include <catch2/catch.hpp>
#include "rtl_gen/rtl.hpp"
