"""``pglab bisect``: the first commit between a good one and a bad one that changed a point's
figure, each step a stored campaign of the good, the middle and the bad commits' builds."""
