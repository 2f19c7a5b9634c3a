public enum DocRouteTypesPlaceholder {}
