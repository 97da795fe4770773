#pragma once
// libsolv's C headers name a struct member `requires`, a keyword since C++20. Every C++ file
// includes libsolv through here, where that member is spelled `requires_`.
extern "C" {
#define requires requires_
#include <solv/pool.h>
#include <solv/poolid.h>
#include <solv/problems.h>
#include <solv/queue.h>
#include <solv/repo.h>
#include <solv/rules.h>
#include <solv/solvable.h>
#include <solv/solver.h>
#undef requires
}
