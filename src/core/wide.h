/*
 * wide.h — 128-bit integers for intermediate products.
 *
 * Every product of two millicore values is taken in 128 bits so a quantity
 * a user can type never wraps around. GCC and Clang provide __int128 on
 * 64-bit targets; __extension__ keeps -Wpedantic quiet about it.
 */
#ifndef HR_CORE_WIDE_H
#define HR_CORE_WIDE_H

__extension__ typedef __int128 hr_i128;
__extension__ typedef unsigned __int128 hr_u128;

#endif
