/*
 * wclass.h — the write classes of the API client (client.h) and its write
 * budget: one limiter per class.
 *
 * Resizes, events and every other write take their tokens from the main
 * limiter (HR_KW_DEFAULT, where the urgent count and the yield rule of
 * limiter.h live); the status annotations from one of their own
 * (HR_KW_ANNOTATION), so a pod's annotation follows its resize at once
 * instead of queueing behind the wave, and takes nothing from the resizes'
 * budget — as client-go's event recorder, whose client has a limiter of its
 * own (design §5 "Notes on their own budget"). Both run at the same
 * clientQPS/clientBurst (hr_kwbudget_set sets both): each annotation
 * follows one applied resize, so the annotations come at the resizes' pace
 * and their limiter only caps a catch-up; the peak is twice clientQPS
 * during a wave, the writes per pod unchanged.
 *
 * A thread chooses the class of its writes (hr_kclient_write_class, a
 * thread-local: no client call takes it as an argument); the client picks
 * that class's limiter (hr_kwbudget_mine).
 */
#ifndef HR_KUBE_WCLASS_H
#define HR_KUBE_WCLASS_H

#include <stdint.h>

#include "kube/transport/limiter.h"
#include "util/err.h"

typedef enum hr_kwclass { HR_KW_DEFAULT, HR_KW_ANNOTATION, HR_KW_COUNT_ } hr_kwclass;

/* The class of the calling thread's writes from now on, on every client;
 * returns the one before (to restore it). A thread starts with
 * HR_KW_DEFAULT. */
hr_kwclass hr_kclient_write_class(hr_kwclass k);

/* The calling thread's class now. */
hr_kwclass hr_kclient_write_class_now(void);

/* The client's write budget: a limiter per class. */
typedef struct hr_kwbudget {
    hr_klimiter lim[HR_KW_COUNT_];
} hr_kwbudget;

/* Every class at qps/burst (hr_klimiter_init's defaults), full. 0, or
 * the errno of the mutex that could not be made (nothing to destroy). */
HR_MUST_CHECK int hr_kwbudget_init(hr_kwbudget *b, double qps, int burst, int64_t now_ns);
void hr_kwbudget_destroy(hr_kwbudget *b);

/* Every class's limiter to qps/burst, live (hr_klimiter_set). */
void hr_kwbudget_set(hr_kwbudget *b, double qps, int burst, int64_t now_ns);

/* The limiter of class k; HR_KW_DEFAULT's is the main one. */
hr_klimiter *hr_kwbudget_of(hr_kwbudget *b, hr_kwclass k);

/* The limiter of the calling thread's class (hr_kclient_write_class_now). */
hr_klimiter *hr_kwbudget_mine(hr_kwbudget *b);

#endif
