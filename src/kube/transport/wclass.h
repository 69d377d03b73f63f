/*
 * wclass.h — the write classes of the API client (client.h).
 */
#ifndef HR_KUBE_WCLASS_H
#define HR_KUBE_WCLASS_H

/* The write classes (design §5 "Notes"): resizes, events and every other
 * write take their tokens from the client's limiter; the status annotations
 * from one of their own at the same clientQPS/clientBurst, so a pod's
 * annotation follows its resize at once instead of queueing behind the
 * wave, and takes nothing from the resizes' budget (as client-go's event
 * recorder, whose client has a limiter of its own). hr_kclient_set_rate
 * sets both. */
typedef enum hr_kwclass { HR_KW_DEFAULT, HR_KW_ANNOTATION } hr_kwclass;

/* The class of the calling thread's writes from now on, on every client;
 * returns the one before (to restore it). A thread starts with
 * HR_KW_DEFAULT. */
hr_kwclass hr_kclient_write_class(hr_kwclass k);

/* The calling thread's class now (for the client's limiter choice). */
hr_kwclass hr_kclient_write_class_now(void);

#endif
