package snapshot

import (
	"math/bits"
	"sort"
)

// hookShare is one account's rows that concern the Object.<init> hook: its init classes (with
// what their named sites counted) and its unnamed sites. settle fills in what no site saw.
type hookShare struct {
	classes map[string]*HookClass
	unnamed Totals
	notSeen Totals
}

// settle computes, for every account, what the hook counted that no rewritten site did: per
// class, its init rows less the rows of its named sites, then less the unnamed sites' objects.
//
// A class's init rows and its sites' rows need not fall in the same account: the hook charges
// the account of the thread when the constructor runs, and the code running it may belong to
// another account than the site that counts the object afterwards (reflection and
// deserialization in the JDK, with --jdk and '*'). So the subtraction is settled across
// accounts, so that the accounts' figures add up to the sums over classes:
//
//  1. Per class and account, what the init rows hold beyond the named sites' rows is the
//     excess; what the sites counted beyond the init rows is counted there by a site and
//     constructed elsewhere.
//  2. The class's objects counted at sites elsewhere come off the other accounts' excess, in
//     proportion to it (shareOut); what remains is the class's NotSeen in each account.
//  3. Per account, the unnamed sites' objects (reflect, lambda) come off the sum of its classes'
//     NotSeen; what an account's unnamed sites counted beyond that comes off the other
//     accounts' remainders, in proportion, as in step 2.
func settle(shares []*hookShare) {
	byClass := map[string][]*HookClass{}
	for _, s := range shares {
		for name, hc := range s.classes {
			byClass[name] = append(byClass[name], hc)
		}
	}
	for _, hcs := range byClass {
		cons, at := make([]Totals, len(hcs)), make([]Totals, len(hcs))
		for i, hc := range hcs {
			cons[i], at[i] = hc.Constructed, hc.AtSites
		}
		left := offset(cons, at)
		for i, hc := range hcs {
			hc.NotSeen = left[i]
			hc.NotSeen.UnknownRows = hc.Constructed.UnknownRows + hc.AtSites.UnknownRows
		}
	}
	beyond, unnamed := make([]Totals, len(shares)), make([]Totals, len(shares))
	for i, s := range shares {
		for _, hc := range s.classes {
			beyond[i].plus(hc.NotSeen)
		}
		unnamed[i] = s.unnamed
	}
	for i, t := range offset(beyond, unnamed) {
		shares[i].notSeen = t
		shares[i].notSeen.UnknownRows = beyond[i].UnknownRows + unnamed[i].UnknownRows
	}
}

// offset returns, per account i, have[i] less take[i], where what an account's take exceeds its
// have by comes off the other accounts' remainders in proportion to them; each figure on its
// own, none below 0, the total exactly sum(have) less sum(take), or 0.
func offset(have, take []Totals) []Totals {
	out := make([]Totals, len(have))
	for f := range figures(&Totals{}) {
		ex, def := make([]int64, len(have)), int64(0)
		var total int64
		for i := range have {
			h, t := *figures(&have[i])[f], *figures(&take[i])[f]
			if h > t {
				ex[i] = h - t
				total += ex[i]
			} else {
				def += t - h
			}
		}
		taken := shareOut(min(def, total), ex)
		for i := range out {
			*figures(&out[i])[f] = ex[i] - taken[i]
		}
	}
	return out
}

// figures lists the additive figures of t, in a fixed order.
func figures(t *Totals) []*int64 {
	return []*int64{&t.Objects, &t.Arrays, &t.Elements, &t.Bytes, &t.Live, &t.LiveBytes, &t.Reclaimed, &t.Untracked}
}

// shareOut splits total (at most the sum of weights) in proportion to the weights, each share
// at most its weight, the shares adding up to total exactly (largest remainders get the units
// the rounding left).
func shareOut(total int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += w
	}
	if total <= 0 || sum == 0 {
		return out
	}
	rem := make([]uint64, len(weights))
	given := int64(0)
	for i, w := range weights {
		hi, lo := bits.Mul64(uint64(total), uint64(w))
		q, r := bits.Div64(hi, lo, uint64(sum)) // hi < sum: total ≤ sum
		out[i], rem[i] = int64(q), r
		given += int64(q)
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for _, i := range order {
		if given == total {
			break
		}
		if out[i] < weights[i] {
			out[i]++
			given++
		}
	}
	return out
}
