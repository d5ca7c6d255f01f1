// Everything a generator needs: #include "rtl_gen/rtl.hpp".
#pragma once

#include "rtl_gen/bitvec.hpp"
#include "rtl_gen/check.hpp"
#include "rtl_gen/emit.hpp"
#include "rtl_gen/error.hpp"
#include "rtl_gen/expr.hpp"
#include "rtl_gen/module.hpp"
#include "rtl_gen/type.hpp"
