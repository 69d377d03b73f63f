/*
 * certplan.c — the self-managed certificate's decision (see certplan.h).
 */
#include "server/certplan.h"

static int64_t earlier(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

hr_certplan_action hr_certplan_decide(const hr_certplan_in *in, const hr_certplan_policy *p,
                                      int64_t now, int64_t *next_at)
{
    int64_t next = INT64_MAX;
    hr_certplan_action a = HR_CERTPLAN_KEEP;
    if (!in->ca_ok) {
        a = HR_CERTPLAN_NEW_CA;
    } else if (in->ca_not_after - now <= p->ca_renew_before) {
        a = HR_CERTPLAN_ADD_CA;
    } else if (!in->leaf_ok ||
               (in->leaf_by_ca && in->leaf_not_after - now <= p->leaf_renew_before)) {
        a = HR_CERTPLAN_NEW_LEAF; /* missing, broken, or due */
    } else if (!in->leaf_by_ca) {
        /* re-rooting: switch only once the API server trusts the new CA */
        a = in->webhook_trusts_ca ? HR_CERTPLAN_NEW_LEAF : HR_CERTPLAN_KEEP;
    } else if (in->n_bundle > 1 && now - in->leaf_not_before >= p->drop_old_after) {
        a = HR_CERTPLAN_DROP_OLD_CA;
    } else {
        next = earlier(in->leaf_not_after - p->leaf_renew_before,
                       in->ca_not_after - p->ca_renew_before);
        if (in->n_bundle > 1)
            next = earlier(next, in->leaf_not_before + p->drop_old_after);
    }
    if (a != HR_CERTPLAN_KEEP || !in->leaf_by_ca)
        next = now; /* look again at once after a write, or while waiting on the caBundle */
    if (next_at)
        *next_at = next;
    return a;
}

const char *hr_certplan_action_name(hr_certplan_action a)
{
    switch (a) {
    case HR_CERTPLAN_KEEP: return "keep";
    case HR_CERTPLAN_NEW_CA: return "new-ca";
    case HR_CERTPLAN_ADD_CA: return "add-ca";
    case HR_CERTPLAN_NEW_LEAF: return "new-leaf";
    case HR_CERTPLAN_DROP_OLD_CA: return "drop-old-ca";
    }
    return "?";
}
