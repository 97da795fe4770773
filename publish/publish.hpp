#pragma once
// publish/ owns `envlock mirror`: exactly the files some locks need, copied (verified) into a
// folder any static HTTP server or file:// serves as the original indexes, with the mirrors file
// that points envlock at it. It must not decide versions, install, or serve anything itself.
#include "publish/index_pages.hpp"
#include "publish/lock_mirror.hpp"
