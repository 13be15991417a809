// ATLAS2KUDU_STRINGIFY(MACRO): the value a macro expands to, as a string literal, for names that
// libraries give as numeric or bare-word macros:
//
//   ATLAS2KUDU_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION)   // "westmere" (input/json_text.cpp)
//   "arena." ATLAS2KUDU_STRINGIFY(MALLCTL_ARENAS_ALL)      // "arena.4096" (main.cpp)
//
// Two levels, so that the argument is expanded before it is quoted.
#pragma once

#define ATLAS2KUDU_STRINGIFY_(x) #x
#define ATLAS2KUDU_STRINGIFY(x) ATLAS2KUDU_STRINGIFY_(x)
