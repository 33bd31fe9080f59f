package widgets

// Condition types, one set per writer: a condition type has exactly one owner.
const (
	// ConditionReady is written by the readiness controller.
	ConditionReady = "Ready"
	// ConditionReachable is written by the networking controller.
	ConditionReachable = "Reachable"
	// ConditionPlanned is written by the planner controller.
	ConditionPlanned = "Planned"
)
