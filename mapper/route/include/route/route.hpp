// The routers of both butterfly networks: #include "route/route.hpp".
#pragma once

#include "route/dist.hpp"
#include "route/geometry.hpp"
#include "route/red.hpp"
