// The schedules behind schedule.h's interface, one file each. Private to schedule/.
#pragma once

#include "stepcast/schedule.h"

namespace stepcast::detail {

extern const Schedule kOneFOneB;     // one_f_one_b.cpp
extern const Schedule kInterleaved;  // interleaved.cpp

}  // namespace stepcast::detail
