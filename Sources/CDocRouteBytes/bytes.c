// The module is its header's static inline functions; SwiftPM builds a C target from at least one
// source file, and this one checks that the header compiles on its own.
#include "CDocRouteBytes.h"
