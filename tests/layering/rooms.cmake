# The engine's rooms and the direction of their includes (docs/contributing.md, "Rooms"): a file
# may include headers of its own room and of rooms below it, never above. From the bottom:
#
#   json -> model -> physics -> schedule -> scenario -> estimate -> report -> calibration, tools,
#   formats -> load.cpp and stepcast.h
#
# scenario sits under the estimate: the estimate reads the Scenario it checked, and nothing in
# scenario/ runs an estimate (reading a document never estimates; load.cpp composes read ->
# calibrate -> check). calibration, tools and formats stand side by side on top and may use each
# other (the search ranks with the report's keys, the importers build scenarios), not the files
# above them.
#
# Every public header (engine/include/stepcast/) is listed in exactly one room below, and every
# source or private header sits in the folder of its room (engine/src/<room>/): a new file of
# either kind fails this check until it is placed. Run: cmake -DSOURCE_DIR=<repo> -P rooms.cmake
cmake_minimum_required(VERSION 3.20)

set(rooms json model physics schedule scenario estimate report calibration tools formats top)
set(level_json 0)
set(level_model 1)
set(level_physics 2)
set(level_schedule 3)
set(level_scenario 4)
set(level_estimate 5)
set(level_report 6)
set(level_calibration 7)
set(level_tools 7)
set(level_formats 7)
set(level_top 8)

# The public headers, room by room.
set(headers_json json.h result.h rule_ids.h enum_names.h limits.h)
set(headers_model model.h hardware.h plan.h arch_calibration_keys.h)
set(headers_physics compute.h gemm_shape.h attention_kernel.h collectives.h census.h memory.h optimizer.h software_buffers.h offload.h overlap.h sharded_gathers.h ranks.h balance.h)
set(headers_schedule schedule.h pipeline.h pipeline_layout.h)
set(headers_scenario scenario.h catalog.h schema.h share_link.h calibration_fit.h)
set(headers_estimate estimate.h)
set(headers_report report.h)
set(headers_calibration calibrate.h nccl_tests.h gemm_fit.h)
set(headers_tools resolve.h search.h scaling.h deadline.h traffic.h link_load.h)
set(headers_formats import_hf_config.h import_megatron_args.h export_megatron.h
                    torchtitan_config.h)
set(headers_top stepcast.h)

set(problems "")
set(include_dir ${SOURCE_DIR}/engine/include/stepcast)
set(src_dir ${SOURCE_DIR}/engine/src)

# The room of "stepcast/x.h" or of a private "room/x.h".
function(room_of_include inc out)
  set(r "")
  if(inc MATCHES "^stepcast/(.+)$")
    set(name ${CMAKE_MATCH_1})
    foreach(room IN LISTS rooms)
      if(name IN_LIST headers_${room})
        set(r ${room})
      endif()
    endforeach()
  elseif(inc MATCHES "^([a-z_]+)/[^/]+$")
    if(CMAKE_MATCH_1 IN_LIST rooms)
      set(r ${CMAKE_MATCH_1})
    endif()
  endif()
  set(${out} "${r}" PARENT_SCOPE)
endfunction()

function(check_file path room)
  file(STRINGS ${path} lines REGEX "^#include \"")
  set(mine ${level_${room}})
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*$" "\\1" inc "${line}")
    room_of_include(${inc} theirs)
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${path})
    if(theirs STREQUAL "")
      set(problems "${problems}\n  ${rel}: includes ${inc}, which is in no room" PARENT_SCOPE)
    elseif(${level_${theirs}} GREATER ${mine})
      set(problems "${problems}\n  ${rel} (${room}) includes ${inc} (${theirs}, above it)"
          PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

# Public headers: each listed once, each obeying its room.
file(GLOB public RELATIVE ${include_dir} ${include_dir}/*.h)
foreach(h IN LISTS public)
  room_of_include("stepcast/${h}" room)
  if(room STREQUAL "")
    set(problems "${problems}\n  engine/include/stepcast/${h} is in no room: add it to a list in tests/layering/rooms.cmake")
  else()
    check_file(${include_dir}/${h} ${room})
  endif()
endforeach()
foreach(room IN LISTS rooms)
  foreach(h IN LISTS headers_${room})
    if(NOT EXISTS ${include_dir}/${h})
      set(problems "${problems}\n  tests/layering/rooms.cmake lists ${h}, which does not exist")
    endif()
  endforeach()
endforeach()

# Sources and private headers: in the folder of their room, obeying it.
file(GLOB_RECURSE sources RELATIVE ${src_dir} ${src_dir}/*.cpp ${src_dir}/*.h)
foreach(f IN LISTS sources)
  if(f STREQUAL "load.cpp")
    set(room top)
  elseif(f MATCHES "^([a-z_]+)/[^/]+$" AND CMAKE_MATCH_1 IN_LIST rooms)
    set(room ${CMAKE_MATCH_1})
  else()
    set(problems "${problems}\n  engine/src/${f} is in no room's folder")
    continue()
  endif()
  check_file(${src_dir}/${f} ${room})
endforeach()

if(problems)
  message(FATAL_ERROR "Includes against the engine's rooms:${problems}")
endif()
list(LENGTH sources n_sources)
list(LENGTH public n_public)
message(STATUS "rooms: ${n_sources} sources and ${n_public} public headers, every include downwards")
