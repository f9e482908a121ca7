

class {{ entity.name }}(BaseModel):
    """One {{ entity.slug }} record."""

{% for member in entity.members %}
{% if member.kind == "status" %}
    {{ member.name }}: Literal[{% for state in member.states %}{{ state.name|tojson }}{% if not loop.last %}, {% endif %}{% endfor %}] = {{ member.initial.name|tojson }}
{% else %}
    {{ member.name }}: {{ member.annotation }}
{% endif %}
{% endfor %}


{{ entity.store }} = Store()
{% for status in entity.statuses %}

# The {{ status.name }} flow: the label of each state, and the states it may move to.
{{ status.constant }}_LABELS = {
{% for state in status.states %}
    {{ state.name|tojson }}: {{ state.label|tojson }},
{% endfor %}
}
{{ status.constant }}_NEXT = {
{% for state in status.states %}
    {{ state.name|tojson }}: ({% for next in state.next %}{{ next.name|tojson }},{% if not loop.last %} {% endif %}{% endfor %}),
{% endfor %}
}
{% endfor %}


def label_{{ entity.slug }}(key: int) -> str:
    """How one {{ entity.slug }} is named in options and in other records."""
    return f"#{key} {cell({{ entity.store }}.rows[key].{{ entity.title_attribute.name }})}"


def describe_{{ entity.slug }}(key: int, row: {{ entity.name }}) -> str:
    """One {{ entity.slug }} as the text of a list item."""
    parts = [
        label_{{ entity.slug }}(key),
{% for member in entity.members[1:] %}
{% if member.kind == "status" %}
        cell({{ entity.slug|upper }}_{{ member.name|upper }}_LABELS[row.{{ member.name }}]),
{% elif member.kind == "relation" %}
        label_{{ member.target.slug }}(row.{{ member.name }}) if row.{{ member.name }} is not None else "",
{% else %}
        cell(row.{{ member.name }}),
{% endif %}
{% endfor %}
    ]
    return " · ".join(part for part in parts if part)


def conflict_{{ entity.slug }}(row: {{ entity.name }}, old: Optional[{{ entity.name }}]) -> Optional[str]:
    """Why `row` cannot be stored (replacing `old`, if given), or None."""
{% for member in entity.members %}
{% if member.kind == "relation" %}
    if row.{{ member.name }} is not None and row.{{ member.name }} not in {{ member.target.store }}.rows:
        return "%s: there is no %s #%d." % ({{ member.label|tojson }}, {{ member.target.label|tojson }}, row.{{ member.name }})
{% elif member.kind == "status" %}
    if old is not None and row.{{ member.name }} != old.{{ member.name }}:
        if row.{{ member.name }} not in {{ entity.slug|upper }}_{{ member.name|upper }}_NEXT[old.{{ member.name }}]:
            labels = {{ entity.slug|upper }}_{{ member.name|upper }}_LABELS
            return "%s: cannot move from %s to %s." % ({{ member.label|tojson }}, labels[old.{{ member.name }}], labels[row.{{ member.name }}])
{% endif %}
{% endfor %}
    return None
