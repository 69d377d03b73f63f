/*
 * group.c — one ceiling for a group (group.h, design §2.10).
 */
#include "group.h"

#include <string.h>

#include "policy.h"
#include "wide.h"

bool hr_group_uniform_value(const char *v)
{
    return v != NULL && strcmp(v, "true") == 0;
}

bool hr_group_key(const char *ns, bool group_uniform, const char *group_label,
                  const char *owner_uid, bool owner_controller, char *buf, size_t cap)
{
    if (!group_uniform || ns == NULL || buf == NULL || cap == 0)
        return false;
    const char *kind, *val;
    if (group_label != NULL && group_label[0] != '\0') {
        kind = "label:";
        val = group_label;
    } else if (owner_controller && owner_uid != NULL && owner_uid[0] != '\0') {
        kind = "owner:";
        val = owner_uid;
    } else {
        return false;
    }
    size_t ln = strlen(ns), lk = strlen(kind), lv = strlen(val);
    if (ln + 1 + lk + lv + 1 > cap)
        return false;
    memcpy(buf, ns, ln);
    buf[ln] = '/';
    memcpy(buf + ln + 1, kind, lk);
    memcpy(buf + ln + 1 + lk, val, lv + 1);
    return true;
}

/* Compare a/b with c/d (b, d > 0, all ≥ 0): <0, 0, >0. Millicore values
 * below 2^62 make each product fit in 127 bits. */
static int ratio_cmp(int64_t a, int64_t b, int64_t c, int64_t d)
{
    hr_i128 l = (hr_i128)a * d, r = (hr_i128)c * b;
    return l < r ? -1 : l > r ? 1 : 0;
}

/* hr_should_write on ratios: should n1/d1 replace the value n0/d0 in
 * force (design §2.5, on the group's value)? (n1/d1 − n0/d0)·100 against
 * percent·n0/d0, all multiplied by d0·d1; saturating where a product of
 * absurd quantities would overflow (then the difference is far beyond any
 * band anyway). */
static bool ratio_should_write(const hr_config *c, int64_t n0, int64_t d0, int64_t n1, int64_t d1)
{
    hr_i128 now = (hr_i128)n0 * d1, next = (hr_i128)n1 * d0;
    if (next == now)
        return false;
    hr_i128 diff = next > now ? next - now : now - next;
    int pct = next > now ? c->grow_percent : c->shrink_percent;
    hr_i128 lhs, rhs;
    if (__builtin_mul_overflow(diff, (hr_i128)100, &lhs))
        return true;
    if (__builtin_mul_overflow(now, (hr_i128)pct, &rhs))
        return false;
    return lhs >= rhs;
}

int64_t hr_group_target(const hr_config *c, const hr_pod *p, int64_t request, int64_t own_target,
                        int64_t num, int64_t den)
{
    if (request <= 0 || den <= 0 || own_target <= request)
        return own_target < request ? request : own_target;
    int64_t q = c->quantum > 0 ? c->quantum : 1;
    int64_t g = hr_pod_grid_floor(c, p, request);
    if (g == HR_NONE || g >= own_target)
        return own_target; /* no grid point between the request and its own target */
    int64_t v = hr_muldiv64(request, num, den);
    int64_t t = v <= g ? g : g + (v - g) / q * q;
    return hr_min64(t, own_target);
}

/* Is member i ordered before member j on a tie of their ratios? */
static bool before(const hr_group_member *m, size_t i, size_t j)
{
    const char *ni = m[i].ns ? m[i].ns : "", *nj = m[j].ns ? m[j].ns : "";
    int k = strcmp(ni, nj);
    if (k != 0)
        return k < 0;
    k = strcmp(m[i].name ? m[i].name : "", m[j].name ? m[j].name : "");
    return k != 0 ? k < 0 : i < j;
}

void hr_group_held_fold(int64_t current, int64_t request, bool *known, int64_t *num, int64_t *den)
{
    if (current <= 0 || request <= 0)
        return;
    if (!*known || ratio_cmp(current, request, *num, *den) < 0) {
        *known = true;
        *num = current;
        *den = request;
    }
}

void hr_group_plan(const hr_config *c, const hr_group_member *m, size_t n, int64_t *const *limits,
                   hr_group_member_out *out, hr_group_result *res)
{
    memset(res, 0, sizeof *res);
    if (n == 0)
        return;
    /* ρ: the smallest own ratio t_i / r_i; H: the smallest current one. */
    size_t b = 0;
    for (size_t i = 1; i < n; i++) {
        int k = ratio_cmp(m[i].own_target, m[i].request, m[b].own_target, m[b].request);
        if (k < 0 || (k == 0 && before(m, i, b)))
            b = i;
    }
    res->binding = b;
    const hr_config *cb = m[b].cfg ? m[b].cfg : c; /* the group's deadband */
    res->ratio_num = m[b].own_target;
    res->ratio_den = m[b].request > 0 ? m[b].request : 1;
    res->ratio_milli = hr_muldiv64(res->ratio_num, 1000, res->ratio_den);
    for (size_t i = 0; i < n; i++)
        hr_group_held_fold(m[i].current, m[i].request, &res->held_known, &res->held_num,
                           &res->held_den);
    /* Every member at ρ, split; the group's new value after the split is
     * the smallest total_i / r_i (for one member: its target / request). */
    size_t lo = 0;
    for (size_t i = 0; i < n; i++) {
        const hr_config *ci = m[i].cfg ? m[i].cfg : c;
        out[i].target = hr_group_target(ci, m[i].pod, m[i].request, m[i].own_target, res->ratio_num,
                                        res->ratio_den);
        out[i].guarded = false;
        out[i].total =
            hr_split_target(ci, m[i].pod, m[i].request, out[i].target, limits[i], &out[i].guarded);
        if (ratio_cmp(out[i].total, m[i].request, out[lo].total, m[lo].request) < 0)
            lo = i;
    }
    res->moves = !res->held_known ||
                 ratio_should_write(cb, res->held_num, res->held_den, out[lo].total, m[lo].request);
    for (size_t i = 0; i < n; i++) {
        int64_t cur = m[i].current;
        if (res->moves)
            out[i].write = cur <= 0 || out[i].total != cur;
        else
            out[i].write =
                cur <= 0 ||
                (cur > out[i].total && hr_should_write(m[i].cfg ? m[i].cfg : c, cur, out[i].total));
    }
}

void hr_group_apply(const hr_config *c, hr_group_slot *s, size_t n, hr_group_member *m,
                    hr_group_member_out *o, int64_t **lp, hr_group_result *res)
{
    for (size_t i = 0; i < n; i++) {
        const hr_pod_plan *pp = s[i].plan;
        const hr_config *ci = s[i].cfg ? s[i].cfg : c;
        s[i].own_target = hr_pod_target(ci, s[i].np->allocatable, pp->share, pp->share_managed,
                                        pp->share_n, s[i].pod, pp->request, NULL);
        m[i] = (hr_group_member){s[i].pod, pp->request, s[i].own_target, pp->current,
                                 s[i].ns,  s[i].name,   s[i].cfg};
        lp[i] = s[i].limits;
    }
    hr_group_plan(c, m, n, lp, o, res);
    for (size_t i = 0; i < n; i++) {
        hr_pod_plan *pp = s[i].plan;
        if (pp->write)
            s[i].np->n_write--;
        pp->target = o[i].total;
        pp->qos_guarded = o[i].guarded;
        pp->write = o[i].write;
        pp->gate = HR_GATE_PASS;
        if (pp->write) {
            s[i].np->n_write++;
            hr_node gnode = s[i].node != NULL ? *s[i].node : (hr_node){0};
            gnode.booking_unknown = s[i].np->booking_unknown;
            pp->gate = hr_gate_check(&gnode, pp->current, pp->target,
                                     hr_sadd64(pp->target, hr_pod_unmanaged_limits(s[i].pod)));
        }
    }
}
